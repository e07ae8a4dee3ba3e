import { InputError } from '../errors.js';
import type { Store } from '../store/store.js';
import { LocalRunner } from './local.js';
import type { Runner } from './runner.js';

export interface RunnerConfig {
  kind: 'local' | 'queue';
  config: { workers?: number; heartbeatMs?: number; leaseMs?: number };
}

/**
 * The runner `[runner]` configures. `defaultWorkers` is the command's budget: a local runner inside one
 * command runs as many runs at once as the command allows, unless `workers` says otherwise.
 */
export const openRunner = (runner: RunnerConfig, store: Store, defaultWorkers: number): Runner => {
  if (runner.kind === 'local') {
    return new LocalRunner(store, {
      workers: runner.config.workers ?? defaultWorkers,
      ...(runner.config.heartbeatMs ? { heartbeatMs: runner.config.heartbeatMs } : {}),
      ...(runner.config.leaseMs ? { leaseMs: runner.config.leaseMs } : {}),
    });
  }
  throw new InputError(`runner kind "${runner.kind}" is not available yet`, undefined, 'set [runner] kind = "local"');
};
