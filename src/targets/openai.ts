import { z } from 'zod';
import { once } from '../once.js';
import { endpointUrl, modelTarget, modelTargetKeys } from './model-target.js';
import type { TargetDef } from './target.js';

const config = once(() =>
  z.strictObject({
    ...modelTargetKeys,
    base_url: endpointUrl('http://host:port/v1'),
    /** Env var to read the key from when api_key is absent. */
    api_key_env: z.string().min(1).default('OPENAI_API_KEY'),
    temperature: z.number().min(0).optional(),
    max_tokens: z.number().int().positive().optional(),
  }),
);

/**
 * Any OpenAI-compatible chat endpoint: its turns through openai-chat.ts, its embeddings (the `similar` grader)
 * through the AI SDK's provider.
 */
export const openai: TargetDef<ReturnType<typeof config>> = {
  config,
  secretKeys: ['api_key', 'headers'],
  model: (cfg) => cfg.model,
  maxOutputTokens: (cfg) => cfg.max_tokens,
  create: (cfg, context) => {
    const chat = async (apiKey: string | undefined) => {
      const { openaiChatModel } = await import('./openai-chat.js');
      return openaiChatModel({ baseUrl: cfg.base_url, model: cfg.model, apiKey, headers: cfg.headers });
    };
    const embedding = async (apiKey: string | undefined) => {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      const { httpFetch } = await import('./http-fetch.js');
      return createOpenAICompatible({
        name: 'proctor',
        baseURL: cfg.base_url,
        // A local endpoint (vLLM, Ollama) often needs no key, so a missing one is not an error here.
        apiKey,
        ...(cfg.headers ? { headers: cfg.headers } : {}),
        fetch: httpFetch,
      }).embeddingModel(cfg.model);
    };
    // `model` names the embedding model too when the target is used for embeddings (the `similar` grader).
    return modelTarget('openai', cfg, context, chat, { loadEmbedding: embedding });
  },
};
