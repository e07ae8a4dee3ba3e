import { caseName } from './case-name.js';
import type { CaseChange, Comparison } from './compare.js';
import { type Exporter, type ExportSource, SpooledExport } from './exporters.js';
import { FailureList } from './failures.js';
import { skippedLinesWarning } from './reader.js';
import { RepeatTally } from './repeats.js';
import type { IndexRow } from './row.js';
import { formatUsd, type OutcomeCounts, type Summary, SummaryTally } from './summary.js';

// A CI summary is read, not searched: past this many failures a link to the bundle says the rest.
export const markdownListed = 50;

const entities: Readonly<Record<string, string>> = { '<': '&lt;', '>': '&gt;', '&': '&amp;' };

/** Text in a Markdown table cell: one line, no cell break, no HTML (model output can hold anything). */
const cell = (text: string): string =>
  text.replace(/\r?\n/g, ' ').replace(/[|\\`*_[\]<>&]/g, (c) => entities[c] ?? `\\${c}`);

const pct = (rate: number): string => `${(rate * 100).toFixed(1)}%`;

const row = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;

const countsLine = (c: OutcomeCounts): string =>
  `${c.passed}/${c.total} passed (${pct(c.pass_rate)})` +
  (c.failed ? `, ${c.failed} failed` : '') +
  (c.error ? `, ${c.error} errored` : '') +
  (c.canceled ? `, ${c.canceled} canceled` : '');

const targetTable = (s: Summary): string[] => [
  row([
    'target',
    'passed',
    'failed',
    'error',
    'canceled',
    'pass rate',
    'mean score',
    'p50 ms',
    'cost USD',
    'judge USD',
  ]),
  row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ...s.targets.map((t) =>
    row([
      cell(t.target),
      String(t.passed),
      String(t.failed),
      String(t.error),
      String(t.canceled),
      pct(t.pass_rate),
      t.mean_score === null ? '-' : t.mean_score.toFixed(3),
      String(t.duration_ms.p50),
      formatUsd(t.usage),
      formatUsd(t.judge_usage),
    ]),
  ),
];

function* failureSection(dir: string, total: number, list: FailureList): Generator<string> {
  if (total === 0) return;
  yield `\n### Failures (${total})\n\n`;
  yield `${row(['case', 'target', 'outcome', 'why'])}\n${row(['---', '---', '---', '---'])}\n`;
  const listed = list.failures(dir, markdownListed);
  for (const f of listed) {
    const id = f.row.identity;
    yield `${row([cell(caseName(id)), cell(id.target), f.row.outcome, cell(f.reason)])}\n`;
  }
  if (total > listed.length) {
    yield `\n…and ${total - listed.length} more: \`proctor results show ${dir} --failures\`\n`;
  }
}

/** Cases whose repeated samples (`--repeat`) disagree, with their pass fraction. */
const flakySection = (repeats: RepeatTally): string[] => {
  const { flaky } = repeats.judge({ kind: 'all' });
  if (flaky.length === 0) return [];
  const shown = flaky
    .slice(0, markdownListed)
    .map(
      (c) => `- ${cell(caseName(c.identity))} · ${cell(c.identity.target)}: ${c.passed}/${c.samples} samples passed`,
    );
  const more = flaky.length > shown.length ? [`- …and ${flaky.length - shown.length} more`] : [];
  return [`\n### Flaky (${flaky.length})\n`, ...shown, ...more];
};

const changeList = (title: string, changes: readonly CaseChange[]): string[] => {
  if (changes.length === 0) return [];
  const shown = changes.slice(0, markdownListed).map((c) => {
    const from = c.base?.outcome ?? 'absent';
    const to = c.head?.outcome ?? 'absent';
    return `- ${cell(caseName(c.identity))} · ${cell(c.identity.target)}: ${from} → ${to}`;
  });
  const more = changes.length > shown.length ? [`- …and ${changes.length - shown.length} more`] : [];
  return [`\n### ${title} (${changes.length})\n`, ...shown, ...more];
};

/** The comparison with a base run, for a pull request: the verdict, then what regressed and what got fixed. */
const compareSection = (c: Comparison): string[] => [
  `\n### Compared with ${cell(c.base)}\n`,
  `**${cell(c.verdict)}**`,
  ...changeList('Regressions', c.regressed),
  ...changeList('Fixes', c.fixed),
  ...changeList('Only in the base (missing here)', c.only_in_base),
];

/** What the Markdown shows of a bundle, gathered in a pass over its latest rows (a run's own, or an export's). */
export interface MarkdownFacts {
  summary: Summary;
  /** Holding at least the first `markdownListed` failures. */
  failures: FailureList;
  repeats: RepeatTally;
}

/** The run as Markdown for a CI job summary (GitHub's `$GITHUB_STEP_SUMMARY`): headline, targets, failures. */
export function* renderMarkdown(
  source: ExportSource,
  facts: MarkdownFacts,
  comparison?: Comparison,
): Generator<string> {
  const { dir, runId } = source;
  const { summary } = facts;
  if (summary.skipped_lines) source.warn(skippedLinesWarning(summary.skipped_lines));
  const c = summary.counts;
  const mark = c.total > 0 && c.passed === c.total ? '✅' : '❌';
  // A blank line first: the job summary may already hold another step's text.
  yield `\n## ${mark} Proctor run ${cell(runId)}: ${countsLine(c)}\n\n`;
  yield `${targetTable(summary).join('\n')}\n`;
  if (summary.budget?.exhausted)
    yield `\n**Budget ran out:** ${summary.budget.not_started} case(s) not started (\`budget_exceeded\`); \`--resume\` with a larger \`--budget-usd\` runs them.\n`;
  yield* failureSection(dir, c.failed + c.error, facts.failures);
  const flaky = flakySection(facts.repeats);
  if (flaky.length) yield `${flaky.join('\n')}\n`;
  if (comparison) yield `${compareSection(comparison).join('\n')}\n`;
}

class MarkdownExport extends SpooledExport {
  private readonly summary = new SummaryTally();
  private readonly failures = new FailureList(markdownListed);
  private readonly repeats = new RepeatTally();

  visit(row: IndexRow): void {
    this.summary.visit(row);
    this.failures.visit(row);
    this.repeats.visit(row);
  }

  document(): Iterable<string> {
    const summary = this.summary.summary(this.source.runId, this.index);
    return renderMarkdown(this.source, { summary, failures: this.failures, repeats: this.repeats });
  }
}

/** `results export --format markdown`: the same Markdown a CI summary gets, without a comparison. */
export const exportMarkdown: Exporter = (source) => new MarkdownExport(source);
