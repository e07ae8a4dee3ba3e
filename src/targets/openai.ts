import { z } from 'zod';
import { modelTarget } from './model-target.js';
import type { TargetDef } from './target.js';

const config = z.strictObject({
  // An unresolved `${VAR}` must pass: the plan validates before interpolating secrets that only a worker has.
  base_url: z.string().refine((s) => s.includes('${') || URL.canParse(s), 'must be a URL like http://host:port/v1'),
  model: z.string().min(1),
  /** `${VAR}` is resolved in the executing process, not by the plan; never written to disk (see secretKeys). */
  api_key: z.string().optional(),
  /** Env var to read the key from when api_key is absent. */
  api_key_env: z.string().min(1).default('OPENAI_API_KEY'),
  temperature: z.number().min(0).optional(),
  max_tokens: z.number().int().positive().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  system: z.string().optional(),
  timeout_s: z.number().positive().optional(),
});

/** Any OpenAI-compatible chat endpoint, through the AI SDK's provider (`doGenerate` of its language model). */
export const openai: TargetDef<typeof config> = {
  config,
  secretKeys: ['api_key', 'headers'],
  model: (cfg) => cfg.model,
  create: (cfg, context) =>
    modelTarget('openai', cfg, context, async (apiKey) => {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      const { httpFetch } = await import('./http-fetch.js');
      const provider = createOpenAICompatible({
        name: 'proctor',
        baseURL: cfg.base_url,
        // A local endpoint (vLLM, Ollama) often needs no key, so a missing one is not an error here.
        apiKey,
        ...(cfg.headers ? { headers: cfg.headers } : {}),
        includeUsage: true,
        fetch: httpFetch,
      });
      return provider.chatModel(cfg.model);
    }),
};
