import { z } from 'zod';
import { once } from '../once.js';
import { endpointUrl, modelTarget, modelTargetKeys } from './model-target.js';
import type { TargetDef } from './target.js';

const config = once(() =>
  z.strictObject({
    ...modelTargetKeys,
    base_url: endpointUrl('https://api.anthropic.com/v1').optional(),
    api_key_env: z.string().min(1).default('ANTHROPIC_API_KEY'),
    temperature: z.number().min(0).max(1).optional(),
    // The Messages API requires a limit.
    max_tokens: z.number().int().positive().default(4096),
    /** Extended thinking: a token budget for reasoning (sent on top of max_tokens), or `adaptive` for newer models. */
    thinking: z
      .union([
        z.literal('adaptive'),
        z.strictObject({ budget_tokens: z.int().min(1024, 'Anthropic needs at least 1024') }),
      ])
      .optional(),
    /** `auto`: Anthropic caches the request's longest reusable prefix (billed as cache writes, then cache reads). */
    cache: z.enum(['auto', 'off']).default('off'),
  }),
);
type Config = z.output<ReturnType<typeof config>>;

const thinkingBudget = (cfg: Config): number =>
  cfg.thinking === undefined || cfg.thinking === 'adaptive' ? 0 : cfg.thinking.budget_tokens;

const providerOptions = (cfg: Config) => {
  const anthropic = {
    ...(cfg.thinking === undefined
      ? {}
      : {
          thinking:
            cfg.thinking === 'adaptive'
              ? { type: 'adaptive' }
              : { type: 'enabled', budgetTokens: cfg.thinking.budget_tokens },
        }),
    // The request-level cache_control: automatic prompt caching, no breakpoints to place.
    ...(cfg.cache === 'auto' ? { cacheControl: { type: 'ephemeral' } } : {}),
  };
  return Object.keys(anthropic).length === 0 ? undefined : { anthropic };
};

/** Anthropic's Messages API through the AI SDK's Anthropic provider. */
export const anthropic: TargetDef<ReturnType<typeof config>> = {
  config,
  secretKeys: ['api_key', 'headers'],
  model: (cfg) => cfg.model,
  // Thinking tokens are billed as output, within a budget the provider adds to max_tokens.
  maxOutputTokens: (cfg) => cfg.max_tokens + thinkingBudget(cfg),
  create: (cfg, context) => {
    const options = providerOptions(cfg);
    return modelTarget(
      'anthropic',
      cfg,
      context,
      async (apiKey) => {
        const { createAnthropic } = await import('@ai-sdk/anthropic');
        const { httpFetch } = await import('./http-fetch.js');
        const provider = createAnthropic({
          ...(cfg.base_url ? { baseURL: cfg.base_url } : {}),
          ...(apiKey ? { apiKey } : {}),
          ...(cfg.headers ? { headers: cfg.headers } : {}),
          fetch: httpFetch,
        });
        return provider.languageModel(cfg.model);
      },
      options ? { providerOptions: options } : {},
    );
  },
};
