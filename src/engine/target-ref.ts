import { z } from 'zod';

/** `[pricing."MODEL"]` as a step carries it: USD per million tokens. */
const priceSchema = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cache_read: z.number().nonnegative().optional(),
  cache_write: z.number().nonnegative().optional(),
});

/**
 * A target as a step names it: the config is raw (`${ENV}` is resolved in the executing process), with the
 * price the plan found for its model, if any.
 */
export const targetRefSchema = z.object({
  label: z.string(),
  kind: z.string(),
  config: z.record(z.string(), z.json()),
  baseDir: z.string(),
  price: priceSchema.optional(),
});

export type TargetRef = z.output<typeof targetRefSchema>;
