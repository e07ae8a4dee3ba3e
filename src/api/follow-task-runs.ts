import type { Submitted } from '../runners/runner.js';
import { sleep } from '../sleep.js';
import { isTerminal, type RunRecord, type Store } from '../store/store.js';
import { type EntryView, entryView } from './task-entry.js';

/** What following task runs reports: a step a run completed (journaled), or a run's terminal record. */
export type TaskRunEvent =
  | { kind: 'entry'; index: number; view: EntryView }
  | { kind: 'finished'; index: number; run: RunRecord };

export interface FollowTaskRunsOptions {
  intervalMs: number;
  /** Resolves when the runner has stopped (after a signal): following ends at the next reading. */
  stopped: Promise<void>;
  onEvent: (event: TaskRunEvent) => void;
}

/**
 * Follows task runs from the store alone (the run index and each instance's journal), so it reports the same
 * under every runner. Returns the last record of each run.
 */
export const followTaskRuns = async (
  store: Store,
  runs: readonly Submitted[],
  o: FollowTaskRunsOptions,
): Promise<RunRecord[]> => {
  let stopped = false;
  void o.stopped.then(() => {
    stopped = true;
  });
  const seen = new Map<string, number>();
  const types = new Map<string, Map<string, string>>();
  const last = new Map<string, RunRecord>();
  for (;;) {
    const wasStopped = stopped;
    for (const [index, s] of runs.entries()) {
      if (last.get(s.runId) && isTerminal((last.get(s.runId) as RunRecord).status)) continue;
      const run = await store.getRun(s.runId);
      if (!run) continue;
      if (!types.has(s.runId)) {
        const spec = (await store.getInstance(s.instanceId))?.spec as
          | { steps?: { id: string; type: string }[] }
          | undefined;
        types.set(s.runId, new Map((spec?.steps ?? []).map((st) => [st.id, st.type])));
      }
      const entries = (await store.readJournal(s.instanceId)).filter((e) => e.seq > (seen.get(s.runId) ?? 0));
      for (const entry of entries) {
        o.onEvent({ kind: 'entry', index, view: entryView(entry, types.get(s.runId)?.get(entry.stepId)) });
        seen.set(s.runId, entry.seq);
      }
      if (isTerminal(run.status)) o.onEvent({ kind: 'finished', index, run });
      last.set(s.runId, run);
    }
    const all = runs.map((s) => last.get(s.runId)).filter((r): r is RunRecord => r !== undefined);
    if ((all.length === runs.length && all.every((r) => isTerminal(r.status))) || wasStopped) return all;
    await sleep(o.intervalMs);
  }
};
