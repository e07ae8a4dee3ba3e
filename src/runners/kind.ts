import type { z } from 'zod';
import type { Store } from '../store/store.js';
import type { Runner } from './runner.js';

/** One kind of runner: its `[runner.config]` schema (snake_case in, camelCase out) and how to open it. */
export interface RunnerKindDef<Config> {
  /** Its config schema, built on the first call and kept (src/once.ts): a registry loads every kind, a command meets few. */
  config: () => z.ZodType<Config>;
  /**
   * The kind's runs execute in other processes, maybe on other machines: the store must be one they all reach
   * (not SQLite), and what a run leaves up (`task run --keep`) is not the submitting command's to hold.
   */
  remote: boolean;
  /**
   * `defaultWorkers` is the command's budget: how many runs an in-process runner executes at once. Runs resolve
   * the files their specs name against `projectRoot` (this process's checkout).
   */
  open(config: Config, store: Store, defaultWorkers: number, projectRoot: string): Runner;
  /**
   * Starts loading what the runner's first submit will need (a client library) and returns at once: called while
   * the store opens, whose round trips leave the process waiting, so the load is off the way to the first case.
   */
  warm?(config: Config): void;
}
