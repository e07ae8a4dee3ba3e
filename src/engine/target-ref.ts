import { z } from 'zod';
import { isRecord, type Json } from '../records.js';

/** `[pricing."MODEL"]` as a step carries it: USD per million tokens. */
const priceSchema = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cache_read: z.number().nonnegative().optional(),
  cache_write: z.number().nonnegative().optional(),
});

const jsonRecord = z.record(z.string(), z.json());
// Every case of a target carries the plan's one config object: it is checked once (a record's parse costs
// ~1.5 KB per case), and passed on as it is, since a JSON record comes out of its parse equal to what went in.
const checkedConfigs = new WeakSet<object>();
const targetConfigSchema = z.unknown().transform((value, ctx): Record<string, Json> => {
  if (isRecord(value) && checkedConfigs.has(value)) return value as Record<string, Json>;
  const parsed = jsonRecord.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue });
    return z.NEVER;
  }
  checkedConfigs.add(value as object);
  return value as Record<string, Json>;
});

/**
 * A target as a step names it: the config is raw (`${ENV}` is resolved in the executing process), with the
 * price the plan found for its model, if any.
 */
export const targetRefSchema = z.object({
  label: z.string(),
  kind: z.string(),
  config: targetConfigSchema,
  baseDir: z.string(),
  price: priceSchema.optional(),
});

export type TargetRef = z.output<typeof targetRefSchema>;
