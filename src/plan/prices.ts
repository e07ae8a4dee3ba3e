import { findPrice } from '../targets/cost.js';
import { type TargetKind, targets } from '../targets/registry.js';
import type { TargetDef } from '../targets/target.js';
import { type Env, validationCopy } from './env.js';
import type { ProjectConfig, TargetSpec } from './spec.js';

/** What a target's config says about its bill: the model `[pricing]` is looked up by, and its reply's token cap. */
const billingOf = (t: TargetSpec, env: Env): { model?: string; maxOutputTokens?: number } => {
  // Every registry entry is a TargetDef; widened so one call serves every kind.
  const def: TargetDef = targets[t.kind as TargetKind];
  const parsed = def.config.safeParse(validationCopy(t.config, env));
  if (!parsed.success) return {};
  const model = def.model?.(parsed.data);
  const maxOutputTokens = def.maxOutputTokens?.(parsed.data);
  return {
    ...(model !== undefined ? { model } : {}),
    ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
  };
};

/** How a model is named in `[pricing]` and in messages: `KIND:MODEL`. */
const modelId = (t: TargetSpec, model: string): string => `${t.kind}:${model}`;

/**
 * Sets each target's `price` from `[pricing]` (and its reply cap, for a budget's first estimate) and returns one
 * warning per billed model without a price: its cost will be recorded as unknown (null), never guessed.
 */
export const attachPrices = (list: readonly TargetSpec[], config: ProjectConfig, env: Env): string[] => {
  const unpriced = new Set<string>();
  for (const t of new Set(list)) {
    const { model, maxOutputTokens } = billingOf(t, env);
    if (model === undefined) continue;
    if (maxOutputTokens !== undefined) t.maxOutputTokens = maxOutputTokens;
    const price = findPrice(config.pricing, t.kind, model);
    if (price) t.price = price;
    else unpriced.add(modelId(t, model));
  }
  return [...unpriced].map(
    (m) => `warning: no price for ${m}: its cost is recorded as unknown; add [pricing."${m}"] to proctor.toml`,
  );
};

/** The billed models of `list` that attachPrices found no price for, each with the labels of its targets. */
export const unpricedModels = (list: readonly TargetSpec[], env: Env): Map<string, string[]> => {
  const unpriced = new Map<string, string[]>();
  for (const t of new Set(list)) {
    const { model } = billingOf(t, env);
    if (model === undefined || t.price) continue;
    const id = modelId(t, model);
    unpriced.set(id, [...(unpriced.get(id) ?? []), t.label]);
  }
  return unpriced;
};
