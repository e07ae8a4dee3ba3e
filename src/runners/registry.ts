import type { RunnerKindDef } from './kind.js';
import { local } from './local.js';
import { queue } from './queue.js';

/** Every runner kind. A new kind is its own file plus one entry here; `[runner] kind` is checked against it. */
export const runnerKinds = { local, queue };
export type RunnerKind = keyof typeof runnerKinds;

export const isRunnerKind = (kind: string): kind is RunnerKind => Object.hasOwn(runnerKinds, kind);

type ConfigOf<K extends RunnerKind> = (typeof runnerKinds)[K] extends RunnerKindDef<infer C> ? C : never;

/** `[runner]` of the project config, validated. */
export type RunnerConfig = { [K in RunnerKind]: { kind: K; config: ConfigOf<K> } }[RunnerKind];

/** How long a run of another host may go unseen before it counts as orphaned, when `[runner.config]` says. */
export const configuredLeaseMs = (runner: RunnerConfig): { leaseMs?: number } =>
  runner.kind === 'local' && runner.config.leaseMs ? { leaseMs: runner.config.leaseMs } : {};
