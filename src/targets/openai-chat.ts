// An OpenAI-compatible chat completion spoken directly: one JSON body out, one JSON reply checked by hand.
// The AI SDK's provider spent about 0.35 ms of CPU per call on its request plumbing, a Response and web stream,
// and a zod parse of the reply; a single non-streamed turn needs none of it. Failures are thrown as the SDK's
// own error classes, so model-errors.ts classifies them exactly as it does the SDK's.

import {
  APICallError,
  InvalidResponseDataError,
  type LanguageModelV3CallOptions,
  type LanguageModelV3Content,
  type LanguageModelV3FinishReason,
  type LanguageModelV3Message,
  type LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { ProctorError } from '../errors.js';
import { httpRequest, replyHeaders } from './http-fetch.js';
import type { TurnModel, TurnReply } from './model-call.js';

export interface OpenAIChatEndpoint {
  baseUrl: string;
  model: string;
  /** A local endpoint (vLLM, Ollama) often needs no key. */
  apiKey?: string | undefined;
  headers?: Record<string, string> | undefined;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const textOf = (m: LanguageModelV3Message): string => {
  if (m.role === 'system') return m.content;
  let text = '';
  for (const part of m.content) {
    if (part.type !== 'text') throw new ProctorError('internal', `the openai target sends text only, not ${part.type}`);
    text += part.text;
  }
  return text;
};

const toolsOf = (options: LanguageModelV3CallOptions): Obj => {
  const tools = options.tools?.filter((t) => t.type === 'function');
  if (!tools?.length) return {};
  const choice = options.toolChoice;
  return {
    tools: tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    })),
    ...(choice === undefined
      ? {}
      : {
          tool_choice: choice.type === 'tool' ? { type: 'function', function: { name: choice.toolName } } : choice.type,
        }),
  };
};

const requestBody = (model: string, options: LanguageModelV3CallOptions): Obj => ({
  model,
  max_tokens: options.maxOutputTokens,
  temperature: options.temperature,
  messages: options.prompt.map((m) => ({ role: m.role, content: textOf(m) })),
  ...toolsOf(options),
});

/** The endpoint's own words for a failed call (`{error: {message}}`), else the status line. */
const errorMessage = (body: string, statusText: string): string => {
  try {
    const parsed: unknown = JSON.parse(body);
    if (isObj(parsed) && isObj(parsed.error) && typeof parsed.error.message === 'string') return parsed.error.message;
  } catch {}
  return statusText;
};

const optionalNumber = (v: unknown, name: string): number | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number') throw new Error(`${name} is not a number`);
  return v;
};

/** As the SDK counts it: a reply with usage has cache-read and reasoning counts, 0 when the endpoint omits them. */
const usageOf = (raw: unknown): LanguageModelV3Usage => {
  if (raw === undefined || raw === null) {
    return {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    };
  }
  if (!isObj(raw)) throw new Error('usage is not an object');
  const input = optionalNumber(raw.prompt_tokens, 'usage.prompt_tokens') ?? 0;
  const output = optionalNumber(raw.completion_tokens, 'usage.completion_tokens') ?? 0;
  const cached = isObj(raw.prompt_tokens_details)
    ? (optionalNumber(raw.prompt_tokens_details.cached_tokens, 'cached_tokens') ?? 0)
    : 0;
  const reasoning = isObj(raw.completion_tokens_details)
    ? (optionalNumber(raw.completion_tokens_details.reasoning_tokens, 'reasoning_tokens') ?? 0)
    : 0;
  return {
    inputTokens: { total: input, noCache: input - cached, cacheRead: cached, cacheWrite: undefined },
    outputTokens: { total: output, text: Math.max(0, output - reasoning), reasoning },
    raw: raw as LanguageModelV3Usage['raw'],
  };
};

const finishOf = (raw: unknown, refused: boolean): LanguageModelV3FinishReason => {
  if (raw !== undefined && raw !== null && typeof raw !== 'string') throw new Error('finish_reason is not a string');
  const unified =
    raw === 'stop'
      ? refused
        ? 'content-filter'
        : 'stop'
      : raw === 'length'
        ? 'length'
        : raw === 'content_filter'
          ? 'content-filter'
          : raw === 'tool_calls' || raw === 'function_call'
            ? 'tool-calls'
            : 'other';
  return { unified, raw: raw ?? undefined };
};

/** The text, refusal and tool calls of the first choice; reasoning text is left out (a turn does not keep it). */
const contentOf = (message: Obj): { content: LanguageModelV3Content[]; refused: boolean } => {
  const content: LanguageModelV3Content[] = [];
  const text = message.content;
  if (typeof text === 'string') {
    if (text.length > 0) content.push({ type: 'text', text });
  } else if (Array.isArray(text)) {
    for (const part of text)
      if (isObj(part) && part.type === 'text' && typeof part.text === 'string' && part.text.length > 0)
        content.push({ type: 'text', text: part.text });
  } else if (text !== undefined && text !== null) throw new Error('message.content is neither text nor parts');
  // Some servers send a non-string refusal (`false`): ignored, as the SDK does.
  const refused = typeof message.refusal === 'string' && message.refusal.length > 0;
  if (refused) content.push({ type: 'text', text: message.refusal as string });
  const calls = message.tool_calls;
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw new Error('message.tool_calls is not a list');
    calls.forEach((call: unknown, i) => {
      const fn = isObj(call) ? call.function : undefined;
      if (!isObj(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string')
        throw new Error(`tool_calls[${i}] has no function name and arguments`);
      const id = (call as Obj).id;
      content.push({
        type: 'tool-call',
        toolCallId: typeof id === 'string' ? id : `call-${i}`,
        toolName: fn.name,
        input: fn.arguments,
      });
    });
  }
  return { content, refused };
};

/** The reply of a 2xx, or a thrown error saying what in it is not a chat completion. */
const replyOf = (body: string, url: string): TurnReply => {
  const parsed: unknown = JSON.parse(body);
  if (!isObj(parsed) || !Array.isArray(parsed.choices)) throw new Error('the reply has no choices list');
  const choice: unknown = parsed.choices[0];
  if (choice === undefined) {
    throw new InvalidResponseDataError({ data: parsed, message: `no choices in the reply from ${url}` });
  }
  if (!isObj(choice) || !isObj(choice.message)) throw new Error('choices[0] has no message');
  const { content, refused } = contentOf(choice.message);
  return { content, finishReason: finishOf(choice.finish_reason, refused), usage: usageOf(parsed.usage) };
};

/** The chat model of an OpenAI-compatible endpoint, as far as a single turn (model-call.ts) uses one. */
export const openaiChatModel = (endpoint: OpenAIChatEndpoint): TurnModel => {
  const url = `${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const target = new URL(url);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    // Some gateways refuse a request without one; httpRequest sends none of its own.
    'user-agent': 'proctor',
    ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
    ...endpoint.headers,
  };
  return {
    doGenerate: async (options) => {
      const values = requestBody(endpoint.model, options);
      const reply = await httpRequest(target, {
        method: 'POST',
        headers,
        body: JSON.stringify(values),
        signal: options.abortSignal,
      });
      const body = reply.body.toString('utf8');
      const ok = reply.status >= 200 && reply.status < 300;
      const failure = (message: string, cause?: unknown): APICallError =>
        new APICallError({
          message,
          url,
          requestBodyValues: values,
          statusCode: reply.status,
          responseHeaders: replyHeaders(reply.headers),
          responseBody: body,
          cause,
          isRetryable: reply.status === 408 || reply.status === 409 || reply.status === 429 || reply.status >= 500,
        });
      if (!ok) throw failure(errorMessage(body, reply.statusText));
      try {
        return replyOf(body, url);
      } catch (error) {
        if (InvalidResponseDataError.isInstance(error)) throw error;
        throw failure('Failed to process successful response', error);
      }
    },
  };
};
