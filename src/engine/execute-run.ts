import { toErrorRecord } from '../errors.js';
import type { RunOwner, Store, TerminalStatus } from '../store/store.js';
import { replay } from './context.js';
import { recordCase, taskOutcome } from './record-case.js';
import { redact, runSecrets } from './redact.js';
import { runTask } from './run-task.js';
import type { Services } from './services.js';
import type { CaseSpec, RunRequest } from './task.js';

/** What executing a run needs besides its request: the store, the shared services, its owner and its abort. */
export interface ExecuteEnv {
  store: Store;
  services: Services;
  owner: RunOwner;
  signal: AbortSignal;
  /** The runner created this instance itself and nothing else executes it: its journal is known empty. */
  freshInstance?: boolean;
}

/**
 * Executes one QUEUED run to a terminal status: claims it for this owner, walks its task, then marks the run
 * terminal, an eval case's result committed in the same transaction. Every runner executes runs through here.
 * Returns undefined when the run was no longer QUEUED (canceled, or claimed by another worker).
 */
export const executeRun = async (req: RunRequest, env: ExecuteEnv): Promise<TerminalStatus | undefined> => {
  const startedAt = Date.now();
  if (!(await env.store.claimRun(req.runId, env.owner, startedAt))) return undefined;
  try {
    // An instance executed before (a worker that died mid-run) continues from its journal, not from zero.
    const journal = env.freshInstance ? [] : await env.store.readJournal(req.instanceId);
    const result = await runTask(req, {
      store: env.store,
      services: env.services,
      signal: env.signal,
      context: replay(req.context, journal),
      journalLength: journal.at(-1)?.seq ?? 0,
    });
    const finish = req.case
      ? recordCase(req as RunRequest & { case: CaseSpec }, result, startedAt)
      : {
          status: result.status,
          outcome: taskOutcome(result),
          ...(result.error ? { error: result.error } : {}),
        };
    await env.store.finishRun(req.runId, finish, Date.now());
    return finish.status;
  } catch (error) {
    await env.store.finishRun(
      req.runId,
      // Rare (the store failed): worth the run's secrets computed a second time.
      { status: 'FAILED', outcome: 'error', error: redact(toErrorRecord(error), runSecrets(env.services.env, req)) },
      Date.now(),
    );
    return 'FAILED';
  }
};
