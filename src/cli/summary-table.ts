import { type BudgetSummary, formatUsd, type Summary } from '../bundle/summary.js';

const pct = (rate: number): string => `${(rate * 100).toFixed(1)}%`;

/** Renders rows as aligned columns: the first column left-aligned, the rest right-aligned. */
export const table = (header: readonly string[], rows: readonly (readonly string[])[]): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
};

/** The per-target table printed at the end of a run and by `results show`. */
export const summaryTable = (s: Summary): string => {
  const rows = s.targets.map((t) => [
    t.target,
    String(t.total),
    String(t.passed),
    String(t.failed),
    String(t.error),
    pct(t.pass_rate),
    t.mean_score === null ? '-' : t.mean_score.toFixed(3),
    String(t.duration_ms.p50),
    String(t.usage.input_tokens + t.usage.output_tokens),
    formatUsd(t.usage),
    formatUsd(t.judge_usage),
  ]);
  const c = s.counts;
  rows.push([
    'all',
    String(c.total),
    String(c.passed),
    String(c.failed),
    String(c.error),
    pct(c.pass_rate),
    '',
    String(s.duration_ms.p50),
    String(s.usage.input_tokens + s.usage.output_tokens),
    formatUsd(s.usage),
    formatUsd(s.judge_usage),
  ]);
  const lines = table(
    ['target', 'cases', 'passed', 'failed', 'errors', 'pass rate', 'score', 'p50 ms', 'tokens', 'cost $', 'judge $'],
    rows,
  );
  return s.budget ? `${lines}\n\n${budgetLine(s.budget)}` : lines;
};

/** Whether the budget ran out, and what the command spent of it when this summary knows. */
const budgetLine = (b: BudgetSummary): string => {
  const spent =
    b.limit_usd !== undefined && b.spent_usd !== undefined
      ? `$${b.spent_usd.toFixed(4)} of $${b.limit_usd.toFixed(4)} spent`
      : '';
  if (!b.exhausted) return `budget: ${spent}`;
  return `budget ran out${spent ? `: ${spent}` : ''}; ${b.not_started} case(s) not started (error budget_exceeded): --resume with a larger --budget-usd runs them`;
};
