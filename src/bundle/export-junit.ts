import { readCaseDetail } from './case-detail.js';
import { caseName } from './case-name.js';
import type { Exporter } from './exporters.js';
import { xmlAttr, xmlText } from './markup.js';
import { skippedLinesWarning } from './reader.js';
import type { IndexRow } from './row.js';
import { digestIndex } from './summary.js';

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

const tallyOf = (rows: readonly IndexRow[]): Tally => ({
  tests: rows.length,
  failures: rows.filter((r) => r.outcome === 'failed').length,
  errors: rows.filter((r) => r.outcome === 'error').length,
  skipped: rows.filter((r) => r.outcome === 'canceled').length,
  ms: rows.reduce((a, r) => a + r.duration_ms, 0),
});

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

/** JUnit XML as Jenkins, GitLab and GitHub test reporters read it: a testsuite per target, a testcase per case. */
export const exportJunit: Exporter = function* ({ dir, runId, warn }) {
  const digest = digestIndex(dir);
  if (digest.skippedLines) warn(skippedLinesWarning(digest.skippedLines));
  const byTarget = new Map<string, IndexRow[]>();
  for (const row of digest.latest.values()) {
    const list = byTarget.get(row.identity.target) ?? [];
    list.push(row);
    byTarget.set(row.identity.target, list);
  }
  yield '<?xml version="1.0" encoding="UTF-8"?>\n';
  yield `<testsuites name="${xmlAttr(`proctor ${runId}`)}" ${counts(tallyOf([...digest.latest.values()]))}>\n`;
  for (const [target, rows] of byTarget) {
    yield `  <testsuite name="${xmlAttr(target)}" ${counts(tallyOf(rows))}>\n`;
    for (const row of rows) yield testcase(dir, row);
    yield '  </testsuite>\n';
  }
  yield '</testsuites>\n';
};
