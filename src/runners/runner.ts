import type { RunRequest } from '../engine/task.js';
import type { RunRecord } from '../store/store.js';

/** At most `limit` runs sharing `key` execute at once (a command's budget, one target's cap). */
export interface ConcurrencyLimit {
  key: string;
  limit: number;
}

/** A run to execute; ids are derived by the runner when absent (the instance id from the task id). */
export type SubmitRequest = Omit<RunRequest, 'runId' | 'instanceId'> & {
  runId?: string;
  instanceId?: string;
  limits?: ConcurrencyLimit[];
};

/** A target whose calls are held back after a 429, and until when (epoch ms). */
export interface RateLimited {
  label: string;
  until: number;
}

/** The ids a submitted run was recorded under. */
export interface Submitted {
  runId: string;
  instanceId: string;
}

/** Executes runs. Every command submits through one; progress is read from the store, never from the runner. */
export interface Runner {
  /** Persists QUEUED records before any work starts, then returns at once. */
  submit(request: SubmitRequest): Promise<Submitted>;
  submitMany(requests: readonly SubmitRequest[]): Promise<Submitted[]>;
  status(runId: string): Promise<RunRecord | undefined>;
  /** False when this runner is not executing the run: the record is left to its owner. */
  cancel(runId: string): Promise<boolean>;
  /**
   * Ends at once the runs of a group whose cancel was requested and that no process executes (a queue's waiting
   * cases), set-based; the rest are their owners' to stop. Only a runner whose runs wait outside any process has it.
   */
  endCanceledGroup?(groupId: string, now: number): Promise<number>;
  /** Reconciles orphaned runs, then keeps reconciling on a tick. */
  start(): Promise<void>;
  /** Cancels this runner's runs and waits a bounded time for their teardown; safe to call twice. */
  stop(): Promise<void>;
  /** What the user should know about where runs will execute (a Redis that may evict jobs), before submitting. */
  warnings?(): Promise<string[]>;
  /**
   * Lets go of the runs submitted so far without canceling them, and disconnects: only a runner whose runs
   * execute elsewhere (the queue) has it, so `eval run --detach` can end while they go on.
   */
  detach?(): Promise<void>;
  /**
   * Resolves once `n` more of the runs this process executes have ended (their ends committed), after `ms` at
   * the latest, or at stop: a submitter refilling its window learns at once that there is room, where counting
   * in the store on a timer must guess. Only a runner whose runs execute in this process has it.
   */
  ended?(n: number, ms: number): Promise<void>;
  /** Targets held back after a 429 where this runner's runs execute, for the progress display. */
  rateLimited?(): Promise<RateLimited[]>;
}
