import type { NewRun, RunOwner, RunRecord, RunStatus, Store } from '../../src/store/store.js';
import { eventually } from './eventually.js';

/** A run record as the store holds it; throws when there is none. */
export const readRun = async (store: Store, runId: string): Promise<RunRecord> => {
  const record = await store.getRun(runId);
  if (!record) throw new Error(`no run ${runId}`);
  return record;
};

/** Resolves with the run once it has `status`. */
export const runReaches = (store: Store, runId: string, status: RunStatus): Promise<RunRecord> =>
  eventually(async () => {
    const record = await readRun(store, runId);
    return record.status === status ? record : undefined;
  });

/** A run record to insert directly, owned by `owner` when given: for store and reconciler tests. */
export const newRun = (runId: string, owner?: RunOwner): NewRun => ({
  runId,
  groupId: 'g',
  taskId: 't',
  instanceId: `t@${runId}`,
  metadata: {},
  spec: {},
  context: {},
  ...(owner ? { owner } : {}),
});

/** The step ids of every run's journal, in order, one list a run. */
export const journalSteps = async (store: Store): Promise<string[][]> => {
  const steps: string[][] = [];
  for (const run of await store.listRuns({}))
    steps.push((await store.readJournal(run.instanceId)).map((e) => e.stepId));
  return steps;
};
