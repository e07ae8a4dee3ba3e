import { z } from 'zod';
import { ProctorError } from '../../errors.js';
import { extended } from '../../extended.js';
import { graderKinds } from '../../graders/registry.js';
import { once } from '../../once.js';
import { type Json, type Usage, zeroUsage } from '../../records.js';
import { gradeOutput } from '../grade.js';
import { targetRefSchema } from '../target-ref.js';
import type { StepDef } from './step.js';

const config = once(() =>
  z.object({
    verifierId: z.string(),
    /** The step whose output is graded; absent: graders see an empty output (a script checking the workspace). */
    input: z.string().optional(),
    /** weighted_average: the score reaches `threshold` (and no required assertion failed); or every / any assertion passes. */
    aggregate: z.enum(['weighted_average', 'all_pass', 'any_pass']).default('weighted_average'),
    threshold: z.number().min(0).max(1).default(1),
    baseDir: z.string(),
    /** The test id graders see (eval cases). */
    test: z.string().default(''),
    assert: z.array(
      z.object({
        kind: z.enum(graderKinds),
        negate: z.boolean().default(false),
        weight: z.number().min(0).default(1),
        required: z.boolean().default(false),
        id: z.string().optional(),
        threshold: z.number().min(0).max(1).optional(),
        // Any object: the grader's own schema checks it when the grader is made. A record's parse costs ~0.6 KB more.
        config: z.looseObject({}),
      }),
    ),
    /** The judge targets of model-graded assertions, by the label their `judge` names. */
    judges: z.record(z.string(), targetRefSchema).default({}),
  }),
);

interface PromptOutput {
  text: string;
  prompt?: string;
  usage?: Usage;
  durationMs?: number;
  target?: string;
}

/**
 * Grades an earlier step's output (scripts run in the workspace); writes `verifications.<verifier_id>` =
 * {score, pass, results[{id, weight, pass, score, reason}]}. A low score is a result, not an error.
 */
export const verify: StepDef<ReturnType<typeof config>> = {
  config,
  async execute(step, ctx) {
    const outputs = ctx.context.outputs as Record<string, PromptOutput> | undefined;
    const graded: PromptOutput | undefined = step.input === undefined ? { text: '' } : outputs?.[step.input];
    if (!graded)
      throw new ProctorError('internal', `verify step "${ctx.stepId}" has no output of step "${step.input}"`);
    const input = {
      output: graded.text,
      ...(ctx.workspace ? { cwd: ctx.workspace } : {}),
      prompt: graded.prompt ?? '',
      vars: ctx.vars as Record<string, unknown>,
      test: step.test,
      target: graded.target ?? '',
      usage: graded.usage ?? zeroUsage(),
      durationMs: graded.durationMs ?? 0,
    };
    const { verification, judgeCalls } = await gradeOutput(step, input, ctx.services, ctx.signal);
    return {
      ops: [{ op: 'set', path: `verifications.${step.verifierId}`, value: verification as unknown as Json }],
      output: (verification.judgeUsage
        ? extended(verification, { judgeCalls })
        : { ...verification }) as unknown as Json,
      passed: verification.pass,
    };
  },
};
