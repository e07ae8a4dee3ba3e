import { InputError } from '../errors.js';
import { findPrice } from '../targets/cost.js';
import { type TargetKind, targets } from '../targets/registry.js';
import type { TargetDef } from '../targets/target.js';
import { type Env, validationCopy } from './env.js';
import { parsedOnce } from './parse-once.js';
import type { ProjectConfig, TargetSpec } from './spec.js';

/** What a target's config says about its bill: the model `[pricing]` is looked up by, and its reply's token cap. */
const billingOf = (t: TargetSpec, env: Env): { model?: string; maxOutputTokens?: number; reportsCost?: boolean } => {
  // Every registry entry is a TargetDef; widened so one call serves every kind.
  const def: TargetDef = targets[t.kind as TargetKind];
  const parsed = def.config().safeParse(validationCopy(t.config, env), parsedOnce);
  if (!parsed.success) return {};
  const model = def.model?.(parsed.data);
  const maxOutputTokens = def.maxOutputTokens?.(parsed.data);
  const reportsCost = def.reportsCost?.(parsed.data);
  return {
    ...(model !== undefined ? { model } : {}),
    ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
    ...(reportsCost !== undefined ? { reportsCost } : {}),
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
  const modelless = new Set<string>();
  for (const t of new Set(list)) {
    const { model, maxOutputTokens, reportsCost } = billingOf(t, env);
    if (model === undefined) {
      // A billed kind (http) naming no model, whose replies carry no cost: nothing could price it.
      if (reportsCost === false) modelless.add(t.label);
      continue;
    }
    if (maxOutputTokens !== undefined) t.maxOutputTokens = maxOutputTokens;
    const price = findPrice(config.pricing, t.kind, model);
    if (price) t.price = price;
    else if (!reportsCost) unpriced.add(modelId(t, model));
  }
  return [
    ...[...unpriced].map(
      (m) => `warning: no price for ${m}: its cost is recorded as unknown; add [pricing."${m}"] to proctor.toml`,
    ),
    ...[...modelless].map(
      (label) =>
        `warning: no price for target "${label}" (it names no model and its replies carry no cost): its cost is recorded as unknown; give it model = "NAME" and a [pricing."NAME"] entry, or select response.usage.cost`,
    ),
  ];
};

/** Targets whose calls would have no known cost, by model (none for an http target that names no model). */
interface Unpriced {
  /** `KIND:MODEL`, or undefined for a target that names no model (http without `model`). */
  model?: string;
  labels: string[];
}

/**
 * The targets of `list` (after attachPrices) whose cost would be unknown: a model without a `[pricing]` entry, or
 * an http target that names no model and whose replies carry no cost. One entry per model.
 */
const unpricedTargets = (list: readonly TargetSpec[], env: Env): Unpriced[] => {
  const byModel = new Map<string, Unpriced>();
  const modelless: Unpriced[] = [];
  for (const t of new Set(list)) {
    const { model, reportsCost } = billingOf(t, env);
    if (reportsCost === true || t.price) continue;
    if (model === undefined) {
      if (reportsCost === false) modelless.push({ labels: [t.label] });
      continue;
    }
    const id = modelId(t, model);
    const entry = byModel.get(id) ?? { model: id, labels: [] };
    entry.labels.push(t.label);
    byModel.set(id, entry);
  }
  return [...byModel.values(), ...modelless];
};

/** A budget cannot be kept over calls whose cost is unknown: refused (after attachPrices) before anything runs. */
export const refuseUnpriced = (list: readonly TargetSpec[], env: Env): void => {
  const unpriced = unpricedTargets(list, env);
  const [first] = unpriced;
  if (first === undefined) return;
  const labels = (u: Unpriced): string => u.labels.map((l) => `"${l}"`).join(', ');
  const named = unpriced.map((u) => (u.model ? `${u.model} (${labels(u)})` : `target ${labels(u)} (no model)`));
  throw new InputError(
    `a budget needs the cost of every target and judge call, and ${named.join(', ')} ${unpriced.length > 1 ? 'have' : 'has'} no price`,
    undefined,
    first.model
      ? `add [pricing."${first.model}"] with input = USD and output = USD per million tokens to proctor.toml${unpriced.length > 1 ? ' (and one per other model)' : ''}, or run without --budget-usd / [defaults] budget_usd`
      : 'give the target `model = "NAME"` and a [pricing."NAME"] entry in proctor.toml, or select the cost its replies report with `response.usage.cost`',
  );
};
