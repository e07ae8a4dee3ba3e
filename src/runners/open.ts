import type { Store } from '../store/store.js';
import type { RunnerKindDef } from './kind.js';
import { type RunnerConfig, runnerKinds } from './registry.js';
import type { Runner } from './runner.js';

/** Starts loading what the configured runner's first submit needs (see RunnerKindDef.warm). */
export const warmRunner = (runner: RunnerConfig): void =>
  (runnerKinds[runner.kind] as RunnerKindDef<RunnerConfig['config']>).warm?.(runner.config);

/**
 * The runner `[runner]` configures. `defaultWorkers` is the command's budget: a local runner inside one
 * command runs as many runs at once as the command allows, unless `workers` says otherwise. Runs resolve the
 * files their specs name against `projectRoot`.
 */
export const openRunner = (runner: RunnerConfig, store: Store, defaultWorkers: number, projectRoot: string): Runner =>
  // The config was validated against this very kind's schema (plan/config.ts).
  (runnerKinds[runner.kind] as RunnerKindDef<RunnerConfig['config']>).open(
    runner.config,
    store,
    defaultWorkers,
    projectRoot,
  );
