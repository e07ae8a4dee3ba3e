// The plumbing every model target shares: abort and timeout on one signal, the rate gate, error kinds, usage.
import type {
  EmbeddingModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3Usage,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import { CanceledError } from '../errors.js';
import type { Message, Usage } from '../records.js';
import { classifyModelError } from './model-errors.js';
import type { RateGate } from './rate-gate.js';
import type { Embeddings, TargetInput, TargetOutput } from './target.js';
import { singleTurn } from './transcript.js';

/** What a turn reads of a model's reply. */
export type TurnReply = Pick<LanguageModelV3GenerateResult, 'content' | 'usage' | 'finishReason'>;

/**
 * The part of a language model a turn calls: an AI SDK model (anthropic) has it, and so does the openai target's
 * own chat call (openai-chat.ts), which has nothing else.
 */
export interface TurnModel {
  doGenerate(options: LanguageModelV3CallOptions): PromiseLike<TurnReply>;
}

export interface CallBounds {
  /** Named in error messages. */
  url: string;
  timeoutMs?: number | undefined;
  gate: RateGate;
}

/**
 * Runs `call` inside the endpoint's rate gate, with the caller's abort and our own timeout on one signal, and
 * turns whatever it throws into a ProctorError (or CanceledError when the caller aborted).
 */
export const boundedCall = <T>(
  signal: AbortSignal,
  bounds: CallBounds,
  call: (abort: AbortSignal) => PromiseLike<T>,
): Promise<T> => {
  if (signal.aborted) return Promise.reject(new CanceledError());
  return bounds.gate.run(signal, async () => {
    // With a timeout, one controller for both the caller's abort and our timer, so afterwards we know which one
    // fired. Without one (the default), the caller's signal is the only abort: no controller to make per call.
    const timeoutMs = bounds.timeoutMs;
    const controller = timeoutMs === undefined ? undefined : new AbortController();
    let timedOut = false;
    const onAbort = (): void => controller?.abort();
    if (controller) signal.addEventListener('abort', onAbort, { once: true });
    const timer =
      controller &&
      setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
    try {
      return await call(controller?.signal ?? signal);
    } catch (error) {
      if (signal.aborted) throw new CanceledError();
      throw classifyModelError(error, { url: bounds.url, timedOut, timeoutMs });
    } finally {
      clearTimeout(timer);
      if (controller) signal.removeEventListener('abort', onAbort);
    }
  });
};

/** The AI SDK's usage in Proctor's shape; a cost the provider reports (OpenRouter's `usage.cost`) is kept. */
const toUsage = (u: LanguageModelV3Usage): Usage => {
  const reported = u.raw?.cost;
  const usage: Usage = {
    inputTokens: u.inputTokens.total ?? 0,
    outputTokens: u.outputTokens.total ?? 0,
    costUsd: typeof reported === 'number' ? reported : null,
  };
  if (u.inputTokens.cacheRead !== undefined) usage.cacheReadTokens = u.inputTokens.cacheRead;
  if (u.inputTokens.cacheWrite !== undefined) usage.cacheWriteTokens = u.inputTokens.cacheWrite;
  if (u.outputTokens.reasoning !== undefined) usage.reasoningTokens = u.outputTokens.reasoning;
  return usage;
};

const toModelMessage = (m: Message): LanguageModelV3Message =>
  m.role === 'system'
    ? { role: 'system', content: m.content }
    : m.role === 'assistant'
      ? { role: 'assistant', content: [{ type: 'text', text: m.content }] }
      : { role: 'user', content: [{ type: 'text', text: m.content }] };

export interface ModelSettings {
  system?: string | undefined;
  temperature?: number | undefined;
  maxTokens?: number | undefined;
  /** Tools the target offers its model (the model chooses); a forced `input.tool` replaces them. */
  tools?:
    | readonly { name: string; description?: string | undefined; parameters: Record<string, unknown> }[]
    | undefined;
  /** Provider-specific request options (Anthropic's extended thinking), passed to the provider as they are. */
  providerOptions?: SharedV3ProviderOptions | undefined;
}

/** The tools of one call: a forced one (a judge's grade), else the target's own, offered for the model to choose. */
const toolsOf = (input: TargetInput, settings: ModelSettings) => {
  const tool = input.tool;
  if (tool)
    return {
      tools: [{ type: 'function' as const, name: tool.name, description: tool.description, inputSchema: tool.schema }],
      toolChoice: { type: 'tool' as const, toolName: tool.name },
    };
  if (!settings.tools?.length) return {};
  return {
    tools: settings.tools.map((t) => ({
      type: 'function' as const,
      name: t.name,
      ...(t.description === undefined ? {} : { description: t.description }),
      inputSchema: t.parameters,
    })),
    toolChoice: { type: 'auto' as const },
  };
};

const parseArguments = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/**
 * One turn through a model's `doGenerate`. `generateText` would add about 0.5 ms of CPU per call for tool loops
 * and telemetry a single turn never uses.
 */
export const generateTurn = async (
  model: TurnModel,
  input: TargetInput,
  signal: AbortSignal,
  bounds: CallBounds,
  settings: ModelSettings,
): Promise<TargetOutput> => {
  const started = performance.now();
  const turns = input.messages ?? [{ role: 'user', content: input.prompt }];
  const prompt: LanguageModelV3Prompt = [
    ...(settings.system === undefined ? [] : [{ role: 'system' as const, content: settings.system }]),
    ...turns.map(toModelMessage),
  ];
  const tool = input.tool;
  const result = await boundedCall(signal, bounds, (abortSignal) =>
    model.doGenerate({
      prompt,
      ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
      ...(settings.maxTokens === undefined ? {} : { maxOutputTokens: settings.maxTokens }),
      ...toolsOf(input, settings),
      ...(settings.providerOptions === undefined ? {} : { providerOptions: settings.providerOptions }),
      abortSignal,
    }),
  );
  let text = '';
  let toolInput: unknown;
  const calls: { name: string; input: unknown }[] = [];
  for (const part of result.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'tool-call' && tool) {
      // Arguments that are not JSON leave toolInput unset: the caller falls back to the text.
      if (part.toolName === tool.name) toolInput = parseArguments(part.input);
    } else if (part.type === 'tool-call')
      calls.push({ name: part.toolName, input: parseArguments(part.input) ?? part.input });
  }
  // A model that only calls the target's tools answered with those calls: graders see them as JSON.
  if (text === '' && calls.length > 0) text = JSON.stringify(calls);
  const shown = toolInput === undefined ? text : JSON.stringify(toolInput);
  return {
    text,
    transcript: input.messages
      ? [
          ...(settings.system === undefined ? [] : [{ role: 'system' as const, content: settings.system }]),
          ...input.messages,
          { role: 'assistant', content: shown },
        ]
      : singleTurn(input.prompt, shown, settings.system),
    usage: toUsage(result.usage),
    durationMs: performance.now() - started,
    ...(toolInput === undefined ? {} : { toolInput }),
    ...(result.finishReason.unified === 'length' ? { truncated: true } : {}),
  };
};

/** Embeddings of `texts` through an AI SDK embedding model, inside the same gate and bounds as a turn. */
export const embedTexts = async (
  model: EmbeddingModelV3,
  texts: string[],
  signal: AbortSignal,
  bounds: CallBounds,
): Promise<Embeddings> => {
  const started = performance.now();
  const result = await boundedCall(signal, bounds, (abortSignal) => model.doEmbed({ values: texts, abortSignal }));
  return {
    vectors: result.embeddings,
    usage: { inputTokens: result.usage?.tokens ?? 0, outputTokens: 0, costUsd: null },
    durationMs: performance.now() - started,
  };
};
