import { findPrice } from '../targets/cost.js';
import { type TargetKind, targets } from '../targets/registry.js';
import type { TargetDef } from '../targets/target.js';
import { type Env, validationCopy } from './env.js';
import type { ProjectConfig, TargetSpec } from './spec.js';

/**
 * Sets each target's `price` from `[pricing]` and returns one warning per billed model without a price: its
 * cost will be recorded as unknown (null), never guessed.
 */
export const attachPrices = (list: readonly TargetSpec[], config: ProjectConfig, env: Env): string[] => {
  const unpriced = new Set<string>();
  for (const t of new Set(list)) {
    // Every registry entry is a TargetDef; widened so one call serves every kind.
    const def: TargetDef = targets[t.kind as TargetKind];
    const parsed = def.config.safeParse(validationCopy(t.config, env));
    const model = parsed.success ? def.model?.(parsed.data) : undefined;
    if (model === undefined) continue;
    const price = findPrice(config.pricing, t.kind, model);
    if (price) t.price = price;
    else unpriced.add(`${t.kind}:${model}`);
  }
  return [...unpriced].map(
    (m) => `warning: no price for ${m}: its cost is recorded as unknown; add [pricing."${m}"] to proctor.toml`,
  );
};
