import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { caseName } from '../bundle/case-name.js';
import type { Comparison } from '../bundle/compare.js';
import { renderMarkdown } from '../bundle/export-markdown.js';
import type { ExportFormat } from '../bundle/exporters.js';
import type { FailureList } from '../bundle/failures.js';
import type { Summary } from '../bundle/summary.js';
import { selectBundle } from '../plan/select-bundle.js';
import type { ProjectConfig } from '../plan/spec.js';
import { exportFormatOf, writeExportFile } from './export-file.js';
import { type Gate, judgeRun, planGate } from './run-gate.js';
import { type ReportRows, terminalListed, warn } from './run-report-rows.js';
import { summaryTable } from './summary-table.js';

/**
 * What the end of a run does besides its summary: export files (`--export`), a base to compare with
 * (`--compare`), and the gate that decides the exit code (`--pass-rule`, `--fail-under`).
 */
export interface ReportPlan {
  exports: { file: string; format: ExportFormat }[];
  compareDir: string | undefined;
  gate: Gate;
}

/** Reads the report's flags before anything runs, so bad input is exit 2 with nothing written. */
export const planReport = (
  opts: { export?: readonly string[]; compare?: string; passRule?: string; failUnder?: string },
  config: ProjectConfig,
  cwd: string,
): ReportPlan => ({
  exports: (opts.export ?? []).map((file) => ({ file: resolve(cwd, file), format: exportFormatOf(file) })),
  compareDir: opts.compare === undefined ? undefined : selectBundle(opts.compare, config, cwd),
  gate: planGate(opts),
});

const failureLines = (dir: string, summary: Summary, list: FailureList): string[] => {
  const total = summary.counts.failed + summary.counts.error;
  if (total === 0) return [];
  const lines = [`failures (${total}):`];
  for (const f of list.failures(dir, terminalListed)) {
    const id = f.row.identity;
    lines.push(`  ${f.row.outcome.padEnd(6)}  ${caseName(id)} · ${id.target}  ${f.reason}`);
  }
  if (total > terminalListed)
    lines.push(`  … and ${total - terminalListed} more: proctor results show ${dir} --failures`);
  return lines;
};

/**
 * The end of a run: the per-target table, the failing and flaky cases, the verdict against `--compare`, the
 * `--export` files, and under GitHub Actions (`GITHUB_STEP_SUMMARY`) a Markdown job summary. Returns the exit
 * code the gate gives: every case passes its rule, or the pass rate is at or above `--fail-under`.
 */
export const reportRun = (summary: Summary, dir: string, plan: ReportPlan, rows: ReportRows): number => {
  const comparison: Comparison | undefined = rows.comparison?.result(dir, summary.skipped_lines);
  const verdict = judgeRun(rows.repeats, plan.gate);
  const lines = [summaryTable(summary), '', ...failureLines(dir, summary, rows.failures)];
  if (lines.at(-1) !== '') lines.push('');
  if (verdict.lines.length) lines.push(...verdict.lines, '');
  if (comparison) lines.push(`compared with ${comparison.base}: ${comparison.verdict}`, '');
  lines.push(`bundle: ${dir}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  for (const { file, pass } of rows.exports) {
    writeExportFile(pass, file);
    process.stderr.write(`wrote ${file}\n`);
  }
  const stepSummary = process.env.GITHUB_STEP_SUMMARY;
  if (stepSummary) {
    const facts = { summary, failures: rows.failures, repeats: rows.repeats };
    appendFileSync(stepSummary, [...renderMarkdown({ dir, runId: summary.run_id, warn }, facts, comparison)].join(''));
  }
  return verdict.code;
};
