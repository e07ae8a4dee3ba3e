import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText } from 'ai';
import { z } from 'zod';
import { CanceledError } from '../errors.js';
import type { Message } from '../records.js';
import { classifyModelError } from './model-errors.js';
import type { Target, TargetDef } from './target.js';

const config = z.strictObject({
  // An unresolved `${VAR}` must pass: the plan validates before interpolating secrets that only a worker has.
  base_url: z.string().refine((s) => s.includes('${') || URL.canParse(s), 'must be a URL like http://host:port/v1'),
  model: z.string().min(1),
  /** Already interpolated by the plan layer; never written to disk (see secretKeys). */
  api_key: z.string().optional(),
  /** Env var to read the key from when api_key is absent. */
  api_key_env: z.string().min(1).default('OPENAI_API_KEY'),
  temperature: z.number().min(0).optional(),
  max_tokens: z.number().int().positive().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  system: z.string().optional(),
  timeout_s: z.number().positive().optional(),
});

/** Any OpenAI-compatible chat endpoint, through the Vercel AI SDK. */
export const openai: TargetDef<typeof config> = {
  config,
  secretKeys: ['api_key', 'headers'],
  create: (cfg, context) => {
    // Built once per target, not per call: 10,000 calls must not pay for provider setup 10,000 times.
    const provider = createOpenAICompatible({
      name: 'proctor',
      baseURL: cfg.base_url,
      // A local endpoint (vLLM, Ollama) often needs no key, so a missing one is not an error here.
      apiKey: cfg.api_key ?? context.env[cfg.api_key_env],
      ...(cfg.headers ? { headers: cfg.headers } : {}),
      includeUsage: true,
    });
    const model = provider.chatModel(cfg.model);
    const timeoutMs = cfg.timeout_s === undefined ? undefined : cfg.timeout_s * 1000;
    const system = cfg.system;

    const target: Target = {
      invoke: async (input, signal) => {
        if (signal.aborted) throw new CanceledError();
        const started = performance.now();
        // One controller for both the caller's abort and our timeout, so afterwards we know which one fired.
        const controller = new AbortController();
        let timedOut = false;
        const onAbort = (): void => controller.abort();
        signal.addEventListener('abort', onAbort, { once: true });
        const timer =
          timeoutMs === undefined
            ? undefined
            : setTimeout(() => {
                timedOut = true;
                controller.abort();
              }, timeoutMs);
        try {
          const result = await generateText({
            model,
            ...(system === undefined ? {} : { system }),
            prompt: input.prompt,
            temperature: cfg.temperature,
            maxOutputTokens: cfg.max_tokens,
            // Proctor's engine retries by error kind; SDK retries would multiply attempts and hide them.
            maxRetries: 0,
            abortSignal: controller.signal,
          });
          const transcript: Message[] = [];
          if (system !== undefined) transcript.push({ role: 'system', content: system });
          transcript.push({ role: 'user', content: input.prompt }, { role: 'assistant', content: result.text });
          return {
            text: result.text,
            transcript,
            usage: {
              inputTokens: result.usage.inputTokens ?? 0,
              outputTokens: result.usage.outputTokens ?? 0,
              costUsd: 0,
            },
            durationMs: performance.now() - started,
          };
        } catch (error) {
          if (signal.aborted) throw new CanceledError();
          throw classifyModelError(error, { url: cfg.base_url, timedOut, timeoutMs });
        } finally {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
        }
      },
    };
    return target;
  },
};
