import { LocalRunner } from '../../src/runners/local.js';
import type { Runner } from '../../src/runners/runner.js';
import type { Store } from '../../src/store/store.js';

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
}

/**
 * Every runner the conformance suite (test/runners/conformance.test.ts) holds to the Runner contract. A new
 * runner adds one entry here; a runner that needs a service (Redis) says in `unavailable` when it is absent.
 */
export const runnerFactories: RunnerFactory[] = [
  {
    name: 'local',
    create: async (store, options) => new LocalRunner(store, { ...options, heartbeatMs: 200, cancelPollMs: 50 }),
  },
];
