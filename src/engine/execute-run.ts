import { type ErrorRecord, toErrorRecord } from '../errors.js';
import type { RunFinish, RunOwner, Store, TerminalStatus } from '../store/store.js';
import { withCaseCassette } from './cassette-scope.js';
import { replay } from './context.js';
import { recordCase, taskOutcome } from './record-case.js';
import { redact } from './redact.js';
import { runTask, type TaskRunResult } from './run-task.js';
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
  /**
   * The runner claimed the run itself (a queue worker) and ends it through this, under its claim: a run another
   * worker has taken over meanwhile is not committed twice. False: the end was refused. Like `Store.finishRun`,
   * it commits the finish's journal entries with it, or nothing.
   */
  commit?: (runId: string, finish: RunFinish, now: number) => Promise<boolean>;
  /**
   * Why this process must not execute the run, as the error the run then fails with, executing nothing: a
   * worker whose checkout or Proctor differs from the submitter's.
   */
  refusal?: (req: RunRequest) => ErrorRecord | undefined;
  /**
   * The runner's claim of the run (the local runner's eval cases): the task starts without waiting for it, and the
   * run commits only once it resolves, and only if the claim held. A runner whose claim fails aborts the run
   * through `signal`. A claim the runner never writes (the case ended first) resolves true by `executed`: the
   * finish then records the run's start itself (RunFinish.startedAt).
   */
  claimed?: Promise<boolean>;
  /**
   * Called once the run's work is done (its task and teardown) and only its commit remains: the runner may start
   * its next run in the slot meanwhile, since this one calls no model and holds no workspace any more.
   */
  executed?: () => void;
}

/** The abort reason of a run given back to its queue: it records nothing, another execution will. */
export const released = new Error('released to the queue');

/** Runs a case's task with its model calls through its cassette (`--cassette`), when it has one. */
const withCassette = <T>(req: RunRequest, env: ExecuteEnv, fn: () => Promise<T>): Promise<T> => {
  const cassette = req.case?.cassette;
  if (!cassette || cassette.mode === 'off') return fn();
  const file = env.services.projectPath(cassette.file);
  const sample = req.case?.identity.sample ?? 0;
  return withCaseCassette(file, cassette, sample, env.services.secrets(req), fn);
};

/**
 * Executes one QUEUED run to a terminal status: claims it for this owner, walks its task, then marks the run
 * terminal, an eval case's result committed in the same transaction. Every runner executes runs through here.
 * Returns undefined when the run was no longer QUEUED (canceled, or claimed by another worker), or when its
 * commit was refused (already terminal, or superseded by another execution).
 */
export const executeRun = async (req: RunRequest, env: ExecuteEnv): Promise<TerminalStatus | undefined> => {
  const startedAt = Date.now();
  const held = env.commit ? undefined : (env.claimed ?? env.store.claimRun(req.runId, env.owner, startedAt));
  // A run another process claimed or ended first is not this execution's to commit.
  const commit = async (runId: string, finish: RunFinish, now: number): Promise<boolean> => {
    env.executed?.();
    if (env.commit) return env.commit(runId, finish, now);
    return (await held) === true && env.store.finishRun(runId, finish, now);
  };
  if (!env.claimed && held && !(await held)) return undefined;
  try {
    // An instance executed before (a worker that died mid-run) continues from its journal, not from zero.
    const journal = env.freshInstance ? [] : await env.store.readJournal(req.instanceId);
    const refused = env.refusal?.(req);
    const result: TaskRunResult = refused
      ? { status: 'FAILED', context: req.context, error: refused, steps: [], captures: {} }
      : await withCassette(req, env, () =>
          runTask(req, {
            store: env.store,
            services: env.services,
            signal: env.signal,
            context: replay(req.context, journal),
            journalLength: journal.at(-1)?.seq ?? 0,
            recordedByResult: req.case !== undefined,
          }),
        );
    if (env.signal.reason === released) return undefined;
    const finish: RunFinish = req.case
      ? recordCase(req as RunRequest & { case: CaseSpec }, result, startedAt)
      : {
          status: result.status,
          outcome: taskOutcome(result),
          startedAt,
          ...(result.error ? { error: result.error } : {}),
        };
    return (await commit(req.runId, finish, Date.now())) ? finish.status : undefined;
  } catch (error) {
    await commit(
      req.runId,
      // Rare (the store failed): worth the run's secrets computed a second time.
      {
        status: 'FAILED',
        outcome: 'error',
        startedAt,
        error: redact(toErrorRecord(error), env.services.secrets(req)),
      },
      Date.now(),
    );
    return 'FAILED';
  }
};
