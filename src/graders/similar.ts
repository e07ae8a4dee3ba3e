import { z } from 'zod';
import { ProctorError } from '../errors.js';
import { once } from '../once.js';
import type { GraderDef } from './grader.js';
import { judgeKeys, judgeOf } from './judge.js';

const config = once(() =>
  z.strictObject({
    value: z.string().min(1).describe('The reference text the output should mean the same as'),
    judge: judgeKeys().judge,
  }),
);

// Without an assertion `threshold`, a cosine similarity from this passes (promptfoo's default for `similar`).
const passSimilarity = 0.8;

const cosine = (a: readonly number[], b: readonly number[]): number => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
};

/** The output means the same as `value`: the cosine similarity of their embeddings, from the judge's endpoint. */
export const similar: GraderDef<ReturnType<typeof config>> = {
  config,
  judged: true,
  create: (cfg, context) => async (input, signal) => {
    const label = cfg.judge ?? '';
    const judge = judgeOf(context, cfg.judge, 'similar');
    if (!judge.embed)
      throw new ProctorError('grader_error', `judge ${label} has no embedding endpoint: use an openai target`);
    const out = await judge.embed([input.output, cfg.value], signal);
    const [a, b] = out.vectors;
    if (!a || !b || a.length !== b.length)
      throw new ProctorError(
        'grader_error',
        `judge ${label} returned ${out.vectors.length} embeddings of unequal size`,
      );
    const score = Math.max(0, cosine(a, b));
    return {
      pass: score >= passSimilarity,
      score,
      reason: `cosine similarity ${score.toFixed(3)} to the reference`,
      judgeCalls: [
        {
          judge: label,
          prompt: `embed: ${JSON.stringify([input.output.slice(0, 200), cfg.value.slice(0, 200)])}`,
          reply: `cosine ${score}`,
          usage: out.usage,
          durationMs: out.durationMs,
        },
      ],
    };
  },
};
