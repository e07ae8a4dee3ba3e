import type { z } from 'zod';
import type { JsonObject } from '../records.js';
import type { StepDef } from './steps/step.js';
import type { TaskSpec } from './task.js';

// Held weakly: a config lives as long as its request, and a 100,000-case run must not keep them all.
const built = new WeakSet<object>();

/**
 * A step config this process built in its schema's output shape, every default set (an eval case's prompt and
 * verify steps, made by the plan from what it validated): the engine takes it as it is. Parsing them again was
 * 174 ms of the main thread's CPU in a 5,000-case run's profile (3-6 µs a case when zod's code is hot).
 */
export const builtConfig = <C extends z.ZodType>(_def: StepDef<C>, config: z.output<C>): JsonObject => {
  built.add(config as object);
  // Plain data: a step's output shape is JSON, as the stored request holds it.
  return config as JsonObject;
};

/**
 * What a step executes with: a built config as it is; any other (a task file's step, or a request read back from
 * the store or a queue) parsed by its step's schema, which applies the defaults.
 */
export const stepConfig = <C extends z.ZodType>(def: StepDef<C>, config: JsonObject): z.output<C> =>
  built.has(config) ? (config as z.output<C>) : def.config().parse(config);

/**
 * The places of a task's steps whose configs this process built: a runner that stores the task for another
 * process (a queue worker) records them, so that process takes them as built (`takeAsBuilt`) instead of parsing.
 */
export const builtSteps = (task: TaskSpec): number[] =>
  task.steps.flatMap((step, place) => (built.has(step.config) ? [place] : []));

/**
 * Takes the configs at `places` (from `builtSteps` of the process that built them, read back as plain data) as
 * built. Parsing them again was 6% of a queue worker's CPU: every case's prompt and verify configs, per case.
 */
export const takeAsBuilt = (task: TaskSpec, places: readonly number[]): void => {
  for (const place of places) {
    const config = task.steps[place]?.config;
    if (config) built.add(config);
  }
};
