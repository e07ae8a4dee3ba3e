import { recordCase } from '../engine/record-case.js';
import { runSecrets, storedRequest } from '../engine/redact.js';
import type { CaseSpec } from '../engine/task.js';
import type { ErrorRecord } from '../errors.js';
import { extended } from '../extended.js';
import { instanceIdFor } from '../ids.js';
import type { RunOwner, Store } from '../store/store.js';
import type { SubmitRequest } from './runner.js';

/** An eval case's request, as a command submits it. */
export type CaseRequest = SubmitRequest & { case: CaseSpec };

/**
 * Records eval cases that will never start (a budget ran out before them) as runs that ended at once with
 * `error`: each result is committed through the store like any other, so the bundle, `results show` and the
 * exports show them, and `--resume` runs exactly them again. No runner is involved: nothing executes.
 */
export const recordNotStarted = async (
  store: Store,
  requests: readonly CaseRequest[],
  error: ErrorRecord,
  owner: RunOwner,
  env: Readonly<Record<string, string | undefined>>,
): Promise<void> => {
  if (requests.length === 0) return;
  const now = Date.now();
  const runs = requests.map((r) => {
    // A case is submitted once per command, so its key makes the run id unique in its group.
    const runId = r.runId ?? `${r.groupId}.not-started.${r.case.key}`;
    return { request: extended(r, { runId, instanceId: r.instanceId ?? instanceIdFor(r.task.id, runId) }), runId };
  });
  await store.createRuns(
    runs.map(({ request: r }) => ({
      runId: r.runId,
      groupId: r.groupId,
      taskId: r.task.id,
      instanceId: r.instanceId,
      target: r.target,
      caseKey: r.case.key,
      // Stored as every runner stores a request: its secrets redacted.
      ...storedRequest(r, runSecrets(env, r)),
      startStep: r.startStep,
      owner,
    })),
  );
  // Together: the store commits the writes of one tick in one transaction.
  await Promise.all(
    runs.map(({ request: r }) =>
      store.finishRun(
        r.runId,
        recordCase(r, { status: 'FAILED', context: r.context, error, steps: [], captures: {} }, now),
        now,
      ),
    ),
  );
};
