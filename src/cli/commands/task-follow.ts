import { isSnapshotOutput } from '../../engine/artifacts.js';
import { captureEntryId } from '../../engine/capture.js';
import type { RollbackOutput } from '../../engine/run-task.js';
import { teardownEntryId } from '../../engine/teardown.js';
import { isRecord } from '../../records.js';
import type { Submitted } from '../../runners/runner.js';
import { sleep } from '../../sleep.js';
import { isTerminal, type JournalEntry, type RunRecord, type Store } from '../../store/store.js';

export interface TaskFollowOptions {
  out: NodeJS.WritableStream;
  /** One run: print each step's output. Several: each step and each verifier's score, per run. */
  detailed: boolean;
  intervalMs: number;
  /** Resolves when the runner has stopped (after a signal): following ends at the next reading. */
  stopped: Promise<void>;
}

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

/**
 * Follows task runs from the store alone (the run index and each instance's journal), so it prints the
 * same under every runner. Returns the last record of each run.
 */
export const followTaskRuns = async (
  store: Store,
  runs: readonly Submitted[],
  o: TaskFollowOptions,
): Promise<RunRecord[]> => {
  let stopped = false;
  void o.stopped.then(() => {
    stopped = true;
  });
  const seen = new Map<string, number>();
  const types = new Map<string, Map<string, string>>();
  const last = new Map<string, RunRecord>();
  const print = (lines: string[]) => {
    if (lines.length) o.out.write(`${lines.join('\n')}\n`);
  };
  for (;;) {
    const wasStopped = stopped;
    for (const [i, s] of runs.entries()) {
      if (last.get(s.runId) && isTerminal((last.get(s.runId) as RunRecord).status)) continue;
      const run = await store.getRun(s.runId);
      if (!run) continue;
      if (!types.has(s.runId)) {
        const spec = (await store.getInstance(s.instanceId))?.spec as
          | { steps?: { id: string; type: string }[] }
          | undefined;
        types.set(s.runId, new Map((spec?.steps ?? []).map((st) => [st.id, st.type])));
      }
      const prefix = runs.length > 1 ? `[${i + 1}] ` : '';
      const entries = (await store.readJournal(s.instanceId)).filter((e) => e.seq > (seen.get(s.runId) ?? 0));
      for (const e of entries) {
        print(entryLines(e, types.get(s.runId)?.get(e.stepId), prefix, o.detailed));
        seen.set(s.runId, e.seq);
      }
      if (isTerminal(run.status)) print([finalLine(run, prefix || 'run: ')]);
      last.set(s.runId, run);
    }
    const all = runs.map((s) => last.get(s.runId)).filter((r): r is RunRecord => r !== undefined);
    if ((all.length === runs.length && all.every((r) => isTerminal(r.status))) || wasStopped) return all;
    await sleep(o.intervalMs);
  }
};
