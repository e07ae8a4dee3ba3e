import type { TaskRunEvent } from '../../api/follow-task-runs.js';
import { isSnapshotOutput } from '../../engine/artifacts.js';
import { captureEntryId } from '../../engine/capture.js';
import type { RollbackOutput } from '../../engine/run-task.js';
import { teardownEntryId } from '../../engine/teardown.js';
import { isRecord } from '../../records.js';
import type { JournalEntry, RunRecord } from '../../store/store.js';

interface Verification {
  score: number;
  pass: boolean;
  results?: { id: string; pass: boolean; score: number; reason: string }[];
}

const isRollback = (v: unknown): v is RollbackOutput => isRecord(v) && isRecord(v.rollback);
const isVerification = (v: unknown): v is Verification =>
  isRecord(v) && typeof v.score === 'number' && typeof v.pass === 'boolean';
const indent = (text: string, max = 20): string[] => {
  const lines = text.replace(/\s+$/, '').split('\n');
  const shown = lines.length > max ? [...lines.slice(0, max), `… ${lines.length - max} more lines`] : lines;
  return shown.filter((l, i) => l !== '' || i < shown.length - 1).map((l) => `      ${l}`);
};

/** The lines of one step's output, as its journal entry holds it. */
const outputLines = (type: string | undefined, output: unknown): string[] => {
  if (isVerification(output))
    return (output.results ?? []).map(
      (r) => `      ${r.pass ? 'pass' : 'FAIL'} ${r.id} ${r.score.toFixed(2)}: ${r.reason}`,
    );
  if (isSnapshotOutput(output)) {
    const files = Object.keys(output.files);
    return [
      ...(files.length ? [`      files: ${files.join(', ')}`] : []),
      ...(output.diff !== null ? indent(output.diff, 40) : []),
    ];
  }
  if (!isRecord(output)) return output === null ? [] : indent(JSON.stringify(output));
  if (type === 'workspace') return [`      ${String(output.path)}`];
  if (typeof output.text === 'string') return output.text ? indent(output.text) : [];
  if (typeof output.pid === 'number')
    return [`      pid ${output.pid}${output.ready ? `, ready: ${String(output.ready)}` : ''}`];
  return indent(JSON.stringify(output, null, 2));
};

/** One journal entry as the follower prints it; steps show with their ids as the run ran them (seeds substituted). */
const entryLines = (e: JournalEntry, type: string | undefined, prefix: string, detailed: boolean): string[] => {
  const out = e.output;
  if (isRecord(out) && out.seeded === true) return [`${prefix}· ${e.stepId} (seeded)`];
  if (isRollback(out))
    return [
      `${prefix}↺ ${out.rollback.to}: rolled back to ${out.rollback.from} (retry ${out.rollback.retry}): ${out.rollback.span.join(', ')}`,
    ];
  if (e.stepId === teardownEntryId) return [`${prefix}✓ teardown (automatic)`];
  if (e.stepId === captureEntryId) return [`${prefix}✓ workspace diff saved`];
  const score = isVerification(out) ? ` ${out.pass ? 'passed' : 'FAILED'} score ${out.score.toFixed(2)}` : '';
  const attempt = e.attempt > 1 ? ` (attempt ${e.attempt})` : '';
  const head = `${prefix}✓ ${e.stepId}${score}${attempt}`;
  return detailed ? [head, ...outputLines(type, out)] : [head];
};

const finalLine = (run: RunRecord, prefix: string): string =>
  `${prefix}${run.status}${run.outcome ? ` (${run.outcome})` : ''}${run.error ? `: ${run.error.kind}: ${run.error.message}` : ''}`;

/** Prints what following task runs reports: one run in detail (each step's output), several one line a step. */
export const taskRunPrinter = (out: NodeJS.WritableStream, runs: number): ((event: TaskRunEvent) => void) => {
  const detailed = runs === 1;
  const print = (lines: string[]) => {
    if (lines.length) out.write(`${lines.join('\n')}\n`);
  };
  return (event) => {
    const prefix = runs > 1 ? `[${event.index + 1}] ` : '';
    if (event.kind === 'entry') print(entryLines(event.entry, event.stepType, prefix, detailed));
    else print([finalLine(event.run, prefix || 'run: ')]);
  };
};
