import { z } from 'zod';
import { ProctorError } from '../../errors.js';
import { scoreCase } from '../../graders/assertion.js';
import { graderKinds } from '../../graders/registry.js';
import type { Json } from '../../records.js';
import { zeroUsage } from '../../records.js';
import type { StepDef } from './step.js';

const config = z.object({
  verifierId: z.string(),
  /** The step whose output is graded. */
  input: z.string(),
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
      config: z.record(z.string(), z.unknown()),
    }),
  ),
});

interface PromptOutput {
  text: string;
  prompt?: string;
  usage?: { inputTokens: number; outputTokens: number; costUsd: number };
  durationMs?: number;
  target?: string;
}

/** Grades an earlier step's output; writes `verifications.<verifier_id>`. A low score is a result, not an error. */
export const verify: StepDef<typeof config> = {
  config,
  async execute(step, ctx) {
    const outputs = ctx.context.outputs as Record<string, PromptOutput> | undefined;
    const graded = outputs?.[step.input];
    if (!graded)
      throw new ProctorError('internal', `verify step "${ctx.stepId}" has no output of step "${step.input}"`);
    const input = {
      output: graded.text,
      prompt: graded.prompt ?? '',
      vars: ctx.vars as Record<string, unknown>,
      test: step.test,
      target: graded.target ?? '',
      usage: graded.usage ?? zeroUsage(),
      durationMs: graded.durationMs ?? 0,
    };
    const results = [];
    for (const spec of step.assert) {
      const assertion = ctx.services.assertion({ spec, baseDir: step.baseDir });
      const r = await assertion.grade(input, ctx.signal);
      results.push({ id: assertion.id, weight: assertion.weight, required: assertion.required, ...r });
    }
    const { score, pass } = scoreCase(results, step.threshold);
    const verification = { score, pass, threshold: step.threshold, results };
    return {
      ops: [{ op: 'set', path: `verifications.${step.verifierId}`, value: verification }],
      output: verification as unknown as Json,
    };
  },
};
