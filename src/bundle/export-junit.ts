import { readCaseDetail } from './case-detail.js';
import { caseName } from './case-name.js';
import { type Exporter, type ExportPart, SpooledExport } from './exporters.js';
import { xmlAttr, xmlText } from './markup.js';
import type { IndexRow } from './row.js';
import type { Spool } from './spool.js';

// CI pages show a failure's body whole; a long model output would bury the reasons.
const maxOutputChars = 10_000;

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

interface Tally {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  ms: number;
}

const emptyTally = (): Tally => ({ tests: 0, failures: 0, errors: 0, skipped: 0, ms: 0 });

const tally = (t: Tally, row: IndexRow): void => {
  t.tests++;
  if (row.outcome === 'failed') t.failures++;
  else if (row.outcome === 'error') t.errors++;
  else if (row.outcome === 'canceled') t.skipped++;
  t.ms += row.duration_ms;
};

const counts = (t: Tally): string =>
  `tests="${t.tests}" failures="${t.failures}" errors="${t.errors}" skipped="${t.skipped}" time="${seconds(t.ms)}"`;

const failure = (dir: string, row: IndexRow): string => {
  const detail = readCaseDetail(dir, row);
  const failing = detail.reasons.filter((r) => !r.pass);
  const score = row.score === null ? 'no score' : `score ${row.score.toFixed(3)}`;
  const message = failing[0] ? `${score}: ${failing[0].reason}` : score;
  const body = [
    ...detail.reasons.map((r) => `${r.pass ? 'pass' : 'FAIL'} ${r.id}: ${r.reason}`),
    `artifacts: ${row.artifacts}`,
  ].join('\n');
  const output =
    detail.output === undefined
      ? ''
      : `\n      <system-out>${xmlText(detail.output.slice(0, maxOutputChars))}${detail.output.length > maxOutputChars ? '\n…(truncated)' : ''}</system-out>`;
  return `\n      <failure type="failed" message="${xmlAttr(message)}">${xmlText(body)}</failure>${output}\n    `;
};

const testcase = (dir: string, row: IndexRow): string => {
  const open = `    <testcase name="${xmlAttr(caseName(row.identity))}" classname="${xmlAttr(row.identity.target)}" time="${seconds(row.duration_ms)}"`;
  if (row.outcome === 'failed') return `${open}>${failure(dir, row)}</testcase>\n`;
  if (row.outcome === 'error') {
    const kind = row.error?.kind ?? 'internal';
    const message = row.error?.message ?? 'no error recorded';
    return `${open}>\n      <error type="${xmlAttr(kind)}" message="${xmlAttr(message)}">${xmlText(`${kind}: ${message}\nartifacts: ${row.artifacts}`)}</error>\n    </testcase>\n`;
  }
  if (row.outcome === 'canceled') return `${open}>\n      <skipped message="canceled"/>\n    </testcase>\n`;
  return `${open}/>\n`;
};

/** A testsuite's rows, rendered as they stream, and their counts. */
interface Suite {
  cases: Spool;
  tally: Tally;
}

class JunitExport extends SpooledExport {
  private readonly all = emptyTally();
  private readonly suites = new Map<string, Suite>();

  visit(row: IndexRow): void {
    const target = row.identity.target;
    let suite = this.suites.get(target);
    if (!suite) {
      suite = { cases: this.spool(), tally: emptyTally() };
      this.suites.set(target, suite);
    }
    tally(this.all, row);
    tally(suite.tally, row);
    suite.cases.write(testcase(this.source.dir, row));
  }

  *document(): Generator<ExportPart> {
    this.warnSkipped();
    yield '<?xml version="1.0" encoding="UTF-8"?>\n';
    yield `<testsuites name="${xmlAttr(`proctor ${this.source.runId}`)}" ${counts(this.all)}>\n`;
    for (const [target, suite] of this.suites) {
      yield `  <testsuite name="${xmlAttr(target)}" ${counts(suite.tally)}>\n`;
      yield suite.cases;
      yield '  </testsuite>\n';
    }
    yield '</testsuites>\n';
  }
}

/** JUnit XML as Jenkins, GitLab and GitHub test reporters read it: a testsuite per target, a testcase per case. */
export const exportJunit: Exporter = (source) => new JunitExport(source);
