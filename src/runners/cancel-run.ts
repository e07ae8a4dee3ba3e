import { hostname } from 'node:os';
import { InputError } from '../errors.js';
import { sleep } from '../sleep.js';
import { isTerminal, type RunRecord, type Store } from '../store/store.js';
import { defaultLeaseMs, ownerProcessState } from './owner.js';
import type { Runner } from './runner.js';

export interface CancelOptions {
  /** How long to wait for the owner to honour a cancel request. */
  waitMs: number;
  leaseMs?: number;
  pollMs?: number;
}

/**
 * What a cancel did. `canceled`: this runner owned the run and stopped it. `requested`: another process owns
 * it, so a request was recorded for that owner to honour; `run` is the record after waiting. `terminal`:
 * nothing to cancel. `orphaned`: the owner is gone, so nobody can honour a request (`runs gc` fails the run).
 */
export type CancelResult =
  | { kind: 'canceled'; run: RunRecord }
  | { kind: 'requested'; run: RunRecord }
  | { kind: 'terminal'; run: RunRecord }
  | { kind: 'orphaned'; run: RunRecord };

const read = async (store: Store, runId: string): Promise<RunRecord> => {
  const run = await store.getRun(runId);
  if (!run) throw new InputError(`no run "${runId}"`, undefined, 'see `proctor runs list`');
  return run;
};

/** An owner that can still honour a request: on this host its process runs; elsewhere it is within its lease. */
const ownerCanHonour = (run: RunRecord, leaseMs: number): boolean => {
  if (!run.owner) return false;
  if (run.owner.host === hostname()) return ownerProcessState(run.owner) === 'alive';
  return Date.now() - (run.seenAt ?? run.createdAt) < leaseMs;
};

/**
 * Cancels every unfinished run of a group, however many, in a few set-based statements: the request is recorded
 * for each run's owner (a local runner's process, a queue run's worker) and the runs nobody executes end at once.
 * Returns how many runs the request reached. It does not wait: the owners end theirs on their next poll.
 */
export const cancelGroup = async (runner: Runner, store: Store, groupId: string): Promise<number> => {
  const now = Date.now();
  // Requested first: a case claimed in between sees the request at its claim and ends at once.
  const requested = await store.requestGroupCancel(groupId, now);
  if (requested > 0) await runner.endCanceledGroup?.(groupId, now);
  return requested;
};

/**
 * Cancels a run through its owning runner. Only the owner may stop a run and record its end, so when `runner`
 * does not hold it, the cancel is recorded in the store for the owner to pick up on its next poll, and this
 * waits up to `waitMs` for the run to end. A run that finishes first keeps its real outcome.
 */
export const cancelRun = async (
  runner: Runner,
  store: Store,
  runId: string,
  options: CancelOptions,
): Promise<CancelResult> => {
  const before = await read(store, runId);
  if (isTerminal(before.status)) return { kind: 'terminal', run: before };
  if (await runner.cancel(runId)) return { kind: 'canceled', run: await read(store, runId) };
  if (!ownerCanHonour(before, options.leaseMs ?? defaultLeaseMs)) return { kind: 'orphaned', run: before };
  if (!(await store.requestCancel(runId, Date.now()))) return { kind: 'terminal', run: await read(store, runId) };
  const until = Date.now() + options.waitMs;
  let run = await read(store, runId);
  while (!isTerminal(run.status) && Date.now() < until) {
    await sleep(options.pollMs ?? 100);
    run = await read(store, runId);
  }
  return { kind: 'requested', run };
};
