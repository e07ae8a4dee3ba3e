import { z } from 'zod';
import type { EvalOptions } from './spec.js';

/** `evaluate_options` of an eval file and `[defaults]` of proctor.toml: the same keys in both places. */
export const optionsSchema = z.strictObject({
  max_concurrency: z.int().min(1).optional().describe('Most cases in flight at once'),
  repeat: z.int().min(1).optional().describe('Samples per case'),
  timeout_s: z.number().positive().optional().describe('Seconds before a case times out'),
  retries: z.int().nonnegative().optional().describe('Retries of an infrastructure error'),
  judge: z.string().min(1).optional().describe('The target that grades model-graded assertions naming no judge'),
  cassette: z
    .enum(['replay', 'record', 'record-missing', 'off'])
    .optional()
    .describe('Record or replay model calls in cassettes/ (default: replay under CI when cassettes exist)'),
});

export const toEvalOptions = (options: z.output<typeof optionsSchema> | undefined): EvalOptions => {
  const out: EvalOptions = {};
  if (options?.max_concurrency !== undefined) out.maxConcurrency = options.max_concurrency;
  if (options?.repeat !== undefined) out.repeat = options.repeat;
  if (options?.timeout_s !== undefined) out.timeoutS = options.timeout_s;
  if (options?.retries !== undefined) out.retries = options.retries;
  if (options?.judge !== undefined) out.judge = options.judge;
  if (options?.cassette !== undefined) out.cassette = options.cassette;
  return out;
};

/** Labels become part of every case identity and of `test::target` matches, so they stay plain. */
export const labelProblem = (label: string): string | undefined =>
  label === ''
    ? 'is empty'
    : /\s/.test(label)
      ? 'contains whitespace'
      : label.includes('::')
        ? 'contains "::"'
        : undefined;
