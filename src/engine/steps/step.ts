import type { z } from 'zod';
import type { Json, JsonObject } from '../../records.js';
import type { ContextOp } from '../../store/store.js';
import type { Services } from '../services.js';

/**
 * What a step sees: the run context so far (read-only), the run's vars and overrides, where its files are,
 * and the shared services. Plain data apart from `signal` and `services`, so a module step can be handed it.
 */
export interface StepContext {
  stepId: string;
  runId: string;
  instanceId: string;
  context: Readonly<JsonObject>;
  vars: Readonly<JsonObject>;
  /** `--set key=value` of the command that submitted the run (`metadata.user_overrides`). */
  overrides: Readonly<Record<string, string>>;
  /** The current workspace (`context.workspace.path`), when a workspace step has made one. */
  workspace: string | undefined;
  /** Directory of the file that declared the step. */
  baseDir: string;
  /** Where workspaces and service logs of this run are made. */
  workRoot: string;
  /** `--keep`: teardown steps leave resources up for the CLI to hold. */
  keep: boolean;
  signal: AbortSignal;
  services: Services;
}

/** A completed step: exactly the change it makes to the context (journaled) and its output. */
export interface StepResult {
  ops: ContextOp[];
  output: Json;
  /** False when the step completed but judged the run (a verification below its threshold): `retry` may re-run it. */
  passed?: boolean;
}

/** One kind of step: its config schema (the YAML keys of a task file) and how to execute it. */
export interface StepDef<C extends z.ZodType = z.ZodType> {
  /** Its config schema, built on the first call and kept (src/once.ts): a registry loads every kind, a command meets few. */
  config: () => C;
  execute(config: z.output<C>, ctx: StepContext): Promise<StepResult>;
}
