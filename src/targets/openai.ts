import { z } from 'zod';
import { CanceledError } from '../errors.js';
import { chatMessages, sdkPrompt } from './chat-prompt.js';
import type { Target, TargetDef } from './target.js';
import { singleTurn } from './transcript.js';

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
  /** chat: a prompt that renders to a JSON or YAML list of `{role, content}` messages is sent as them. */
  prompt_format: z.enum(['text', 'chat']).default('text'),
  timeout_s: z.number().positive().optional(),
});
type Config = z.output<typeof config>;

/**
 * The SDK's provider, model and error classifier, imported on the first call: a command that never calls a
 * model (validate, results, runs) does not pay for loading them.
 */
const loadModel = async (cfg: Config, apiKey: string | undefined) => {
  const [{ createOpenAICompatible }, { httpFetch }, { classifyModelError }] = await Promise.all([
    import('@ai-sdk/openai-compatible'),
    import('./http-fetch.js'),
    import('./model-errors.js'),
  ]);
  const provider = createOpenAICompatible({
    name: 'proctor',
    baseURL: cfg.base_url,
    // A local endpoint (vLLM, Ollama) often needs no key, so a missing one is not an error here.
    apiKey,
    ...(cfg.headers ? { headers: cfg.headers } : {}),
    includeUsage: true,
    fetch: httpFetch,
  });
  return { model: provider.chatModel(cfg.model), classifyModelError };
};

/**
 * Any OpenAI-compatible chat endpoint, through the AI SDK's provider (`doGenerate` of its language model).
 * `generateText` would add about 0.5 ms of CPU per call for tool loops and telemetry a single turn never uses.
 */
export const openai: TargetDef<typeof config> = {
  config,
  secretKeys: ['api_key', 'headers'],
  create: (cfg, context) => {
    let loaded: ReturnType<typeof loadModel> | undefined;
    const timeoutMs = cfg.timeout_s === undefined ? undefined : cfg.timeout_s * 1000;
    const system = cfg.system;

    const target: Target = {
      invoke: async (input, signal) => {
        if (signal.aborted) throw new CanceledError();
        loaded ??= loadModel(cfg, cfg.api_key ?? context.env[cfg.api_key_env]);
        const { model, classifyModelError } = await loaded;
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
        const chat = cfg.prompt_format === 'chat' ? chatMessages(input.prompt) : undefined;
        try {
          const result = await model.doGenerate({
            prompt: [
              ...(system === undefined ? [] : [{ role: 'system' as const, content: system }]),
              ...(chat
                ? sdkPrompt(chat)
                : [{ role: 'user' as const, content: [{ type: 'text' as const, text: input.prompt }] }]),
            ],
            ...(cfg.temperature === undefined ? {} : { temperature: cfg.temperature }),
            ...(cfg.max_tokens === undefined ? {} : { maxOutputTokens: cfg.max_tokens }),
            abortSignal: controller.signal,
          });
          let text = '';
          for (const part of result.content) if (part.type === 'text') text += part.text;
          return {
            text,
            transcript: chat
              ? [
                  ...(system === undefined ? [] : [{ role: 'system' as const, content: system }]),
                  ...chat.map((m) => ({ role: m.role, content: m.text })),
                  { role: 'assistant', content: text },
                ]
              : singleTurn(input.prompt, text, system),
            usage: {
              inputTokens: result.usage.inputTokens.total ?? 0,
              outputTokens: result.usage.outputTokens.total ?? 0,
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
