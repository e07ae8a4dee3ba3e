import { z } from 'zod';
import { once } from '../once.js';
import { varsSchema } from './eval-schema.js';

/** Keys every step has, whatever its type; the rest of a step mapping is its type's own config. */
export const stepCommonSchema = once(() =>
  z.object({
    id: z.string().min(1).describe('Unique in the task; may use {{ seed.NAME }}'),
    type: z.string().min(1),
    depends_on: z.array(z.string().min(1)).optional().describe('Default: every earlier step. Only earlier steps.'),
    fail_task_on_error: z.boolean().optional().describe('Default true: an error in this step fails the task'),
    retry: z
      .strictObject({
        from: z.string().min(1).describe('This step or one it depends on: the span re-run'),
        max: z.int().positive().default(1),
      })
      .optional(),
    timeout_s: z.number().positive().optional(),
  }),
);
export const stepCommonKeys = once((): readonly string[] => Object.keys(stepCommonSchema().shape));

/** A prompt step as written: its target is a label of proctor.toml or an inline target, default the task's. */
export const promptStepSchema = once(() =>
  z.strictObject({
    prompt: z.string().describe('Rendered with the vars ({{ name }}) and --set values ({{ overrides.name }})'),
    target: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
  }),
);

/** A verify step as written. */
export const verifyStepSchema = once(() =>
  z.strictObject({
    verifier_id: z.string().min(1).optional().describe('Default: the step id'),
    input: z.string().min(1).optional().describe('The step whose output is graded'),
    threshold: z.number().min(0).max(1).default(1),
    aggregate: z.enum(['weighted_average', 'all_pass', 'any_pass']).default('weighted_average'),
    assert: z.array(z.unknown()).min(1),
  }),
);

/** The top level of a `*.task.yaml`; each step is checked on its own afterwards, with positions. */
export const taskShapeSchema = once(() =>
  z.strictObject({
    id: z.string().min(1),
    description: z.string().optional(),
    vars: varsSchema.optional(),
    seeds: z
      .array(z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])))
      .optional()
      .describe('Instance i of --k takes seeds[i % n]'),
    target: z
      .union([z.string().min(1), z.record(z.string(), z.unknown())])
      .optional()
      .describe('Default target of prompt steps'),
    steps: z.array(z.unknown()).min(1),
  }),
);
export type TaskShape = z.output<ReturnType<typeof taskShapeSchema>>;
