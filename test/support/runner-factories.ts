import { LocalRunner } from '../../src/runners/local.js';
import { QueueRunner } from '../../src/runners/queue.js';
import type { Runner } from '../../src/runners/runner.js';
import { QueueWorker } from '../../src/runners/worker.js';
import type { Store } from '../../src/store/store.js';
import { redisProblem, redisUrl } from './queue-fleet.js';
import { storeBackends } from './store-backends.js';
import { openTempStore } from './temp-store.js';

export interface RunnerFactoryOptions {
  /** The runner's capacity: how many runs it executes at once. */
  workers: number;
  /** How long stop() may wait for runs to tear down. */
  stopTimeoutMs?: number;
}

/** One runner implementation under the conformance suite. */
export interface RunnerFactory {
  name: string;
  create(store: Store, options: RunnerFactoryOptions): Promise<Runner>;
  /** Why this runner cannot be tested here (a service it needs is absent), or undefined when it can. */
  unavailable?(): Promise<string | undefined>;
  /** A fresh store of the backend this runner needs. */
  store(): Promise<{ store: Store; remove(): Promise<void> }>;
}

const postgres = async () => (await storeBackends()).find((b) => b.name === 'postgres');

const postgresStore = async (): Promise<{ store: Store; remove(): Promise<void> }> => {
  const backend = await (await postgres())?.create();
  if (!backend) throw new Error('no PostgreSQL backend');
  return backend;
};

const local = async (store: Store, options: RunnerFactoryOptions): Promise<Runner> =>
  new LocalRunner(store, { ...options, heartbeatMs: 200, cancelPollMs: 50 });

/**
 * A queue runner as one process sees a fleet: a submitter and an in-process worker of `workers` slots on a pool
 * of its own. stop() stops the submitter (canceling its runs) and then the worker.
 */
const queueFleet = (store: Store, options: RunnerFactoryOptions): Runner => {
  const config = {
    redis: redisUrl,
    pool: `c${Math.random().toString(36).slice(2, 10)}`,
    concurrency: options.workers,
    lockMs: 3000,
    stalledIntervalMs: 1000,
    maxStalled: 2,
    drainTimeoutMs: 0,
    redisDownExitMs: 60_000,
  };
  const submitter = new QueueRunner(store, config, options.stopTimeoutMs);
  const worker = new QueueWorker(store, config, { ...process.env }, process.cwd());
  void worker.run();
  let stopping: Promise<void> | undefined;
  return {
    submit: (r) => submitter.submit(r),
    submitMany: (r) => submitter.submitMany(r),
    status: (id) => submitter.status(id),
    cancel: (id) => submitter.cancel(id),
    start: () => submitter.start(),
    stop: () => {
      stopping ??= submitter.stop().then(() => worker.close());
      return stopping;
    },
  };
};

/**
 * Every runner the conformance suite (test/runners/conformance.test.ts) holds to the Runner contract. A new
 * runner adds one entry here; a runner that needs a service (Redis) says in `unavailable` when it is absent.
 */
export const runnerFactories: RunnerFactory[] = [
  { name: 'local (SQLite)', create: local, store: openTempStore },
  {
    name: 'local (PostgreSQL)',
    unavailable: async () => (await postgres())?.unavailable,
    create: local,
    store: postgresStore,
  },
  {
    name: 'queue (PostgreSQL, Redis)',
    unavailable: async () => (await postgres())?.unavailable ?? (await redisProblem()),
    create: async (store, options) => {
      // Loaded before the clock starts: in a fleet the worker is another process, whose start costs a submit nothing.
      await Promise.all([import('bullmq'), import('ioredis')]);
      return queueFleet(store, options);
    },
    store: postgresStore,
  },
];
