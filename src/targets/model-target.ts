import type { EmbeddingModelV3, SharedV3ProviderOptions } from '@ai-sdk/provider';
import { z } from 'zod';
import { extended } from '../extended.js';
import { chatMessages } from './chat-prompt.js';
import type { TurnModel } from './model-call.js';
import { rateConfig, rateGate, rateSettingsOf } from './rate-gate.js';
import type { Target, TargetContext } from './target.js';

/** A tool a target offers its model: `parameters` is the JSON Schema of the call's input. */
const modelTool = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 letters, digits, "_" or "-"'),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.json()).default({ type: 'object', properties: {} }),
});

/** Config keys every AI SDK target shares, spelled once. */
export const modelTargetKeys = {
  model: z.string().min(1),
  /** `${VAR}` is resolved in the executing process, not by the plan; never written to disk (see secretKeys). */
  api_key: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  system: z.string().optional(),
  timeout_s: z.number().positive().optional(),
  /** chat: a prompt that renders to a JSON or YAML list of `{role, content}` messages is sent as them. */
  prompt_format: z.enum(['text', 'chat']).default('text'),
  /** The endpoint's adaptive in-flight limit (rate-gate.ts): how it starts, its bounds, how a 429 cuts it. */
  rate: rateConfig.optional(),
  /** Tools offered to the model, which may call them; its calls are the output when it writes no text. */
  tools: z.array(modelTool).optional(),
};

/** An endpoint URL; an unresolved `${VAR}` passes: the plan validates before a worker's secrets are known. */
export const endpointUrl = (example: string) =>
  z.string().refine((s) => s.includes('${') || URL.canParse(s), `must be a URL like ${example}`);

/** The config keys every AI SDK target has. */
export interface ModelTargetConfig {
  base_url?: string | undefined;
  model: string;
  api_key?: string | undefined;
  api_key_env: string;
  temperature?: number | undefined;
  max_tokens?: number | undefined;
  system?: string | undefined;
  timeout_s?: number | undefined;
  prompt_format?: 'text' | 'chat';
  rate?: z.output<typeof rateConfig> | undefined;
  tools?: z.output<typeof modelTool>[] | undefined;
}

/**
 * A target over a language model (an AI SDK provider's, or openai-chat.ts). The model and the call plumbing
 * are imported on the first call: a command that never calls a model (validate, results, runs) does not pay
 * for loading them.
 */
export const modelTarget = (
  kind: string,
  cfg: ModelTargetConfig,
  context: TargetContext,
  load: (apiKey: string | undefined) => Promise<TurnModel>,
  extra: {
    /** The same endpoint's embedding model, for a kind that has one. */
    loadEmbedding?: (apiKey: string | undefined) => Promise<EmbeddingModelV3>;
    /** Provider-specific options sent with every call (Anthropic's extended thinking). */
    providerOptions?: SharedV3ProviderOptions;
  } = {},
): Target => {
  const { loadEmbedding, providerOptions } = extra;
  const apiKey = cfg.api_key ?? context.env[cfg.api_key_env];
  const url = cfg.base_url ?? kind;
  const gate = rateGate(
    { kind, url, apiKey, model: cfg.model, role: context.role ?? 'target', label: context.label ?? kind },
    rateSettingsOf(cfg.rate),
  );
  const bounds = { url, timeoutMs: cfg.timeout_s === undefined ? undefined : cfg.timeout_s * 1000, gate };
  const settings = {
    system: cfg.system,
    temperature: cfg.temperature,
    maxTokens: cfg.max_tokens,
    tools: cfg.tools,
    providerOptions,
  };
  let loaded: Promise<[TurnModel, typeof import('./model-call.js')]> | undefined;
  const target: Target = {
    invoke: async (input, signal) => {
      loaded ??= Promise.all([load(apiKey), import('./model-call.js')]);
      const [model, { generateTurn }] = await loaded;
      const messages = input.messages ?? (cfg.prompt_format === 'chat' ? chatMessages(input.prompt) : undefined);
      return generateTurn(model, messages ? extended(input, { messages }) : input, signal, bounds, settings);
    },
  };
  if (!loadEmbedding) return target;
  let embedder: Promise<[EmbeddingModelV3, typeof import('./model-call.js')]> | undefined;
  target.embed = async (texts, signal) => {
    embedder ??= Promise.all([loadEmbedding(apiKey), import('./model-call.js')]);
    const [model, { embedTexts }] = await embedder;
    return embedTexts(model, texts, signal, bounds);
  };
  return target;
};
