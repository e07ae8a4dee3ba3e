import path from 'node:path';
import { z } from 'zod';
import { ProctorError } from '../errors.js';
import { importFile } from '../import-module.js';
import { once } from '../once.js';
import type { Usage } from '../records.js';
import { compileTemplate } from '../template.js';
import { parsePath, selectPath } from './json-path.js';
import { retryAfterMs } from './model-errors.js';
import { rateConfig, rateGate, rateSettingsOf } from './rate-gate.js';
import type { Target, TargetDef, TargetInput } from './target.js';
import { singleTurn } from './transcript.js';

const config = once(() => {
  const selector = z.string().superRefine((s, ctx) => {
    try {
      parsePath(s);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });
  const transformRef = z.string().regex(/^file:\/\/[^#]+(#[A-Za-z_$][\w$]*)?$/, 'expected file://PATH.mjs#function');
  return z.strictObject({
    /** Liquid template over `prompt` and `vars`; each value is URL-encoded. */
    url: z.string().min(1),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH']).default('POST'),
    /** `${VAR}` in a value is resolved where the target runs, and never written to disk. */
    headers: z.record(z.string(), z.string()).optional(),
    /** A Liquid template (`{{ prompt | json }}`), or a mapping whose string values are templates. */
    body: z.union([z.string(), z.record(z.string(), z.json())]).optional(),
    timeout_s: z.number().positive().default(60),
    /** Statuses that mean success; default any 2xx. */
    ok_status: z.array(z.int().min(100).max(599)).min(1).optional(),
    response: z
      .strictObject({
        format: z.enum(['json', 'text', 'sse']).default('json'),
        /** Where the reply is; for SSE, where each event's piece is (the pieces are concatenated). */
        output: selector.optional(),
        /** `input` counts every input token, cache reads and writes included; `output` includes reasoning. */
        usage: z
          .strictObject({
            input: selector.optional(),
            output: selector.optional(),
            cache_read: selector.optional(),
            cache_write: selector.optional(),
            reasoning: selector.optional(),
            cost: selector.optional(),
          })
          .optional(),
      })
      .default({ format: 'json' }),
    /** `file://x.mjs#fn`: `fn(body, {prompt, vars})` returns the output text, or `{output, usage}`. */
    output_transform: transformRef.optional(),
    max_response_bytes: z
      .int()
      .positive()
      .default(10 * 1024 * 1024),
    /** The model name `[pricing]` is looked up by; without it the cost is what `usage.cost` selects, or unknown. */
    model: z.string().min(1).optional(),
    /** The endpoint's adaptive in-flight limit (rate-gate.ts). */
    rate: rateConfig.optional(),
  });
});
type Config = z.output<ReturnType<typeof config>>;

type Render = (input: TargetInput) => string;

/** Every string of a JSON body rendered as a template; other values kept. */
const renderJson = (value: unknown, scope: Record<string, unknown>): unknown => {
  if (typeof value === 'string') return compileTemplate(value)(scope);
  if (Array.isArray(value)) return value.map((v) => renderJson(v, scope));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderJson(v, scope)]));
  return value;
};

const encodeStrings = (value: unknown): unknown => {
  if (typeof value === 'string') return encodeURIComponent(value);
  if (Array.isArray(value)) return value.map(encodeStrings);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encodeStrings(v)]));
  return value;
};

/** What a body template sees: the prompt, the vars, and the chat messages (a one-message chat for a plain prompt). */
const scopeOf = (input: TargetInput): Record<string, unknown> => ({
  prompt: input.prompt,
  vars: input.vars,
  messages: input.messages ?? [{ role: 'user', content: input.prompt }],
});

const bodyRenderer = (body: Config['body']): Render | undefined => {
  if (body === undefined) return undefined;
  if (typeof body === 'string') {
    const template = compileTemplate(body);
    return (input) => template(scopeOf(input));
  }
  return (input) => JSON.stringify(renderJson(body, scopeOf(input)));
};

/** The status of a response as an error kind, or undefined when it is a success. */
const statusError = (
  status: number,
  headers: () => Record<string, string>,
  url: string,
  ok: readonly number[] | undefined,
) => {
  if (ok ? ok.includes(status) : status >= 200 && status < 300) return undefined;
  const wait = retryAfterMs(headers());
  const detail = wait === undefined ? {} : { retryAfterMs: wait };
  if (status === 429) return new ProctorError('rate_limited', `429 from ${url}`, detail);
  if (status === 408) return new ProctorError('timeout', `408 from ${url}`);
  if (status >= 500) return new ProctorError('http_5xx', `${status} from ${url}`, detail);
  // A 4xx (bad key, bad request) fails the same way again: not retryable.
  return new ProctorError('internal', `${status} from ${url}`);
};

const sseEvents = (text: string): string[] =>
  text
    .split(/\r?\n\r?\n/)
    .map((block) =>
      block
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n'),
    )
    .filter((data) => data !== '');

interface Picked {
  output: unknown;
  usage: Record<string, unknown>;
}

const parseJson = (text: string, url: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    throw new ProctorError('malformed_output', `response from ${url} is not JSON`);
  }
};

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The usage the selectors (or a transform) picked; a token kind not picked is left out, not counted as 0. */
const usageOf = (picked: Picked['usage']): Usage => {
  const usage: Usage = {
    inputTokens: count(picked.input) ?? 0,
    outputTokens: count(picked.output) ?? 0,
    costUsd: count(picked.cost) ?? null,
  };
  const cacheRead = count(picked.cache_read);
  const cacheWrite = count(picked.cache_write);
  const reasoning = count(picked.reasoning);
  if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead;
  if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
};

/**
 * An endpoint of the user's own (an in-house agent, a gateway): URL, method, headers and body templated with the
 * prompt and vars; the reply and usage picked out of the JSON, text or SSE response with selectors, or by a
 * `file://` transform.
 */
export const http: TargetDef<ReturnType<typeof config>> = {
  config,
  secretKeys: ['headers'],
  model: (cfg) => cfg.model,
  // A transform may return a cost with its output; without one or `usage.cost`, only `[pricing]` of `model` can.
  reportsCost: (cfg) => cfg.response.usage?.cost !== undefined || cfg.output_transform !== undefined,
  references: (cfg) => (cfg.output_transform ? { files: [cfg.output_transform.slice(7).split('#')[0] as string] } : {}),
  create: (cfg, context) => {
    const urlTemplate = compileTemplate(cfg.url);
    const renderBody = bodyRenderer(cfg.body);
    const outputPath = cfg.response.output === undefined ? undefined : parsePath(cfg.response.output);
    const usagePaths = Object.entries(cfg.response.usage ?? {}).map(([k, p]) => [k, parsePath(p as string)] as const);
    const headers = { ...(renderBody && typeof cfg.body !== 'string' ? { 'content-type': 'application/json' } : {}) };
    Object.assign(headers, cfg.headers);
    const gate = rateGate(
      {
        kind: 'http',
        url: cfg.url,
        apiKey: JSON.stringify(cfg.headers ?? {}),
        role: context.role ?? 'target',
        label: context.label ?? 'http',
      },
      rateSettingsOf(cfg.rate),
    );
    let transform: Promise<(body: unknown, ctx: object) => unknown> | undefined;
    const loadTransform = (ref: string) => {
      const [file, name = 'default'] = ref.slice(7).split('#') as [string, string?];
      return importFile(path.resolve(context.baseDir, file)).then((m) => {
        const fn = m[name];
        if (typeof fn !== 'function') throw new ProctorError('internal', `${file} exports no function "${name}"`);
        return fn as (body: unknown, ctx: object) => unknown;
      });
    };

    const pick = (body: string, url: string): Picked => {
      const usage: Picked['usage'] = {};
      if (cfg.response.format === 'text') return { output: body, usage };
      if (cfg.response.format === 'json') {
        const json = parseJson(body, url);
        for (const [k, p] of usagePaths) usage[k] = selectPath(json, p);
        return { output: outputPath ? selectPath(json, outputPath) : json, usage };
      }
      let output = '';
      for (const data of sseEvents(body)) {
        if (data.trim() === '[DONE]') break;
        const event = parseJson(data, url);
        const piece = outputPath ? selectPath(event, outputPath) : event;
        if (typeof piece === 'string') output += piece;
        for (const [k, p] of usagePaths) {
          const v = selectPath(event, p);
          if (v !== undefined) usage[k] = v;
        }
      }
      return { output, usage };
    };

    const target: Target = {
      invoke: async (input, signal) => {
        const started = performance.now();
        const url = urlTemplate({ prompt: encodeURIComponent(input.prompt), vars: encodeStrings(input.vars) });
        const body = renderBody?.(input);
        const [{ boundedCall }, { httpRequest, replyHeaders }] = await Promise.all([
          import('./model-call.js'),
          import('./http-fetch.js'),
        ]);
        const text = await boundedCall(signal, { url, timeoutMs: cfg.timeout_s * 1000, gate }, async (abort) => {
          const reply = await httpRequest(new URL(url), {
            method: cfg.method,
            headers,
            body: body !== undefined && cfg.method !== 'GET' ? body : undefined,
            signal: abort,
          });
          const failed = statusError(reply.status, () => replyHeaders(reply.headers), url, cfg.ok_status);
          if (failed) throw failed;
          if (reply.body.byteLength > cfg.max_response_bytes)
            throw new ProctorError('malformed_output', `response from ${url} is over ${cfg.max_response_bytes} bytes`);
          return reply.body.toString('utf8');
        });
        let picked: Picked;
        if (cfg.output_transform) {
          transform ??= loadTransform(cfg.output_transform);
          const raw = cfg.response.format === 'json' ? parseJson(text, url) : text;
          const result = await (await transform)(raw, { prompt: input.prompt, vars: input.vars });
          picked =
            result !== null && typeof result === 'object' && 'output' in result
              ? { output: result.output, usage: ('usage' in result ? result.usage : {}) as Picked['usage'] }
              : { output: result, usage: {} };
        } else picked = pick(text, url);
        if (typeof picked.output !== 'string')
          throw new ProctorError(
            'malformed_output',
            `no text at ${cfg.response.output ?? '$'} in the response from ${url}`,
          );
        const usage = usageOf(picked.usage);
        return {
          text: picked.output,
          transcript: singleTurn(input.prompt, picked.output),
          usage,
          durationMs: performance.now() - started,
        };
      },
    };
    return target;
  },
};
