import type { z } from 'zod';
import type { Json, JsonObject } from '../../records.js';
import type { ContextOp } from '../../store/store.js';
import type { Services } from '../services.js';

/** What a step sees: the run context so far (read-only), the run's vars, and the shared services. */
export interface StepContext {
  stepId: string;
  runId: string;
  context: Readonly<JsonObject>;
  vars: Readonly<JsonObject>;
  signal: AbortSignal;
  services: Services;
}

/** A completed step: exactly the change it makes to the context (journaled) and its output. */
export interface StepResult {
  ops: ContextOp[];
  output: Json;
}

/** One kind of step: its config schema and how to execute it. */
export interface StepDef<C extends z.ZodType = z.ZodType> {
  config: C;
  execute(config: z.output<C>, ctx: StepContext): Promise<StepResult>;
}
