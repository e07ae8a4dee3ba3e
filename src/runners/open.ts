import type { Store } from '../store/store.js';
import type { RunnerKind } from './kinds.js';
import { LocalRunner } from './local.js';
import type { Runner } from './runner.js';

export interface RunnerConfig {
  kind: RunnerKind;
  config: { workers?: number; heartbeatMs?: number; leaseMs?: number };
}

type RunnerFactory = (
  config: RunnerConfig['config'],
  store: Store,
  defaultWorkers: number,
  projectRoot: string,
) => Runner;

// One entry per kind of kinds.ts: the project config has refused any other kind before a store was opened.
const factories: Record<RunnerKind, RunnerFactory> = {
  local: (config, store, defaultWorkers, projectRoot) =>
    new LocalRunner(store, {
      workers: config.workers ?? defaultWorkers,
      projectRoot,
      ...(config.heartbeatMs ? { heartbeatMs: config.heartbeatMs } : {}),
      ...(config.leaseMs ? { leaseMs: config.leaseMs } : {}),
    }),
};

/**
 * The runner `[runner]` configures. `defaultWorkers` is the command's budget: a local runner inside one
 * command runs as many runs at once as the command allows, unless `workers` says otherwise. Runs resolve the
 * files their specs name against `projectRoot`.
 */
export const openRunner = (runner: RunnerConfig, store: Store, defaultWorkers: number, projectRoot: string): Runner =>
  factories[runner.kind](runner.config, store, defaultWorkers, projectRoot);
