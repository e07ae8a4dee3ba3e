import type { Usage } from '../records.js';

/** `[pricing."MODEL"]` of proctor.toml: USD per million tokens. Cache prices default to the input price. */
export interface Price {
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
}

const perMillion = 1_000_000;

/**
 * The usage with its cost filled in: a provider-reported cost wins; otherwise the price applies (reasoning tokens
 * are part of the output and billed as output); without one the cost stays null, never estimated.
 */
export const priceUsage = (usage: Usage, price: Price | undefined): Usage => {
  if (usage.costUsd !== null || price === undefined) return usage;
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const fresh = Math.max(0, usage.inputTokens - cacheRead - cacheWrite);
  const cost =
    (fresh * price.input +
      cacheRead * (price.cache_read ?? price.input) +
      cacheWrite * (price.cache_write ?? price.input) +
      usage.outputTokens * price.output) /
    perMillion;
  return { ...usage, costUsd: cost };
};

/** The `[pricing]` entry of a model: `KIND:MODEL` first (two providers may share a model name), then `MODEL`. */
export const findPrice = (pricing: Readonly<Record<string, Price>>, kind: string, model: string): Price | undefined =>
  pricing[`${kind}:${model}`] ?? pricing[model];
