import type { TaskRunEvent } from '../../api/follow-task-runs.js';
import type { EntryView } from '../../api/task-entry.js';
import { isRecord } from '../../records.js';
import type { RunRecord } from '../../store/store.js';

const indent = (text: string, max = 20): string[] => {
  const lines = text.replace(/\s+$/, '').split('\n');
  const shown = lines.length > max ? [...lines.slice(0, max), `… ${lines.length - max} more lines`] : lines;
  return shown.filter((l, i) => l !== '' || i < shown.length - 1).map((l) => `      ${l}`);
};

/** The lines of one step's output: a verification's results, a snapshot's files and diff, or its output. */
const outputLines = (view: EntryView): string[] => {
  if (view.kind === 'verification')
    return (view.verification.results ?? []).map(
      (r) => `      ${r.pass ? 'pass' : 'FAIL'} ${r.id} ${r.score.toFixed(2)}: ${r.reason}`,
    );
  if (view.kind === 'snapshot')
    return [
      ...(view.files.length ? [`      files: ${view.files.join(', ')}`] : []),
      ...(view.diff !== null ? indent(view.diff, 40) : []),
    ];
  if (view.kind !== 'step') return [];
  const output = view.output;
  if (!isRecord(output)) return output === null ? [] : indent(JSON.stringify(output));
  if (view.stepType === 'workspace') return [`      ${String(output.path)}`];
  if (typeof output.text === 'string') return output.text ? indent(output.text) : [];
  if (typeof output.pid === 'number')
    return [`      pid ${output.pid}${output.ready ? `, ready: ${String(output.ready)}` : ''}`];
  return indent(JSON.stringify(output, null, 2));
};

/** One journal entry as the follower prints it; steps show with their ids as the run ran them (seeds substituted). */
const entryLines = (view: EntryView, prefix: string, detailed: boolean): string[] => {
  if (view.kind === 'seeded') return [`${prefix}· ${view.stepId} (seeded)`];
  if (view.kind === 'rollback') {
    const r = view.rollback;
    return [`${prefix}↺ ${r.to}: rolled back to ${r.from} (retry ${r.retry}): ${r.span.join(', ')}`];
  }
  if (view.kind === 'teardown') return [`${prefix}✓ teardown (automatic)`];
  if (view.kind === 'capture') return [`${prefix}✓ workspace diff saved`];
  const v = view.kind === 'verification' ? view.verification : undefined;
  const score = v ? ` ${v.pass ? 'passed' : 'FAILED'} score ${v.score.toFixed(2)}` : '';
  const attempt = view.attempt > 1 ? ` (attempt ${view.attempt})` : '';
  const head = `${prefix}✓ ${view.stepId}${score}${attempt}`;
  return detailed ? [head, ...outputLines(view)] : [head];
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
    if (event.kind === 'entry') print(entryLines(event.view, prefix, detailed));
    else print([finalLine(event.run, prefix || 'run: ')]);
  };
};
