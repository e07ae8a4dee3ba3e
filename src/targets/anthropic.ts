import { z } from 'zod';
import { endpointUrl, modelTarget, modelTargetKeys } from './model-target.js';
import type { TargetDef } from './target.js';

const config = z.strictObject({
  ...modelTargetKeys,
  base_url: endpointUrl('https://api.anthropic.com/v1').optional(),
  api_key_env: z.string().min(1).default('ANTHROPIC_API_KEY'),
  temperature: z.number().min(0).max(1).optional(),
  // The Messages API requires a limit.
  max_tokens: z.number().int().positive().default(4096),
});

/** Anthropic's Messages API through the AI SDK's Anthropic provider. */
export const anthropic: TargetDef<typeof config> = {
  config,
  secretKeys: ['api_key', 'headers'],
  model: (cfg) => cfg.model,
  maxOutputTokens: (cfg) => cfg.max_tokens,
  create: (cfg, context) =>
    modelTarget('anthropic', cfg, context, async (apiKey) => {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      const { httpFetch } = await import('./http-fetch.js');
      const provider = createAnthropic({
        ...(cfg.base_url ? { baseURL: cfg.base_url } : {}),
        ...(apiKey ? { apiKey } : {}),
        ...(cfg.headers ? { headers: cfg.headers } : {}),
        fetch: httpFetch,
      });
      return provider.languageModel(cfg.model);
    }),
};
