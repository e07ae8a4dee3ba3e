// A fake OpenAI-compatible chat endpoint over real HTTP on 127.0.0.1, for tests and benchmarks.
// Node built-ins only, so bench/fake-server.ts can run it in its own process.
//
// Behaviour is chosen per request by directives in the LAST user message, so one eval can mix them:
//   [[latency:200]]                              wait 200 ms before answering
//   [[status:500 times:2]]                       fail the first 2 requests carrying this exact prompt
//   [[status:429 retry-after:1 times:1]]         …with Retry-After (seconds; also retry-after-ms:N)
//   [[hang]]                                     never answer; the client has to abort
//   [[hang times:1]]                             …only the first request carrying this exact prompt
//   [[gate]]                                     held until openGate() (then answered as usual): a test can
//                                                count what is in flight without racing the answers
//   [[malformed]]                                200 with a body that is not JSON
//   [[reply:some text]]                          the assistant's content (default `echo: <prompt>`)
// POST /embeddings answers with letter-count vectors (see letterCounts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeModelServerOptions {
  /** Added to every response (a `latency` directive adds to it). */
  latencyMs?: number;
  /** Fixed usage for every reply; by default about one token per 4 characters. */
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details?: { cached_tokens: number };
    completion_tokens_details?: { reasoning_tokens: number };
  };
  /** Extra latency by requested model, so one server can play a slow and a fast target. */
  modelLatencyMs?: Record<string, number>;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Keep each request's headers and body in the log (default true); a long benchmark turns it off to save memory. */
  recordPayloads?: boolean;
  /**
   * Decides the reply from the last user message (a judge's prompt): text, or the input of a tool call when the
   * request offers tools. Undefined falls back to the directives.
   */
  respond?: (prompt: string) => FakeReply | undefined;
  /** Answer 429 (with `retry-after-ms: 50`) to a request arriving while this many are already in flight. */
  maxConcurrent?: number;
}

/** A scripted reply: text content, or a call of the offered tool with this input. */
export type FakeReply = { text: string } | { toolInput: unknown };

export interface FakeRequest {
  /** The last user message, directives included. */
  prompt: string;
  /** 0 for a request that was never answered ([[hang]]). */
  status: number;
  at: number;
  /** When the response finished or the client went away; undefined while the request is open. */
  endedAt?: number;
  /** Empty when started with recordPayloads: false. */
  headers: IncomingMessage['headers'];
  body: ChatRequestBody;
}

export interface FakeModelServer {
  /** Base URL including `/v1`, e.g. http://127.0.0.1:41234/v1 */
  readonly url: string;
  readonly port: number;
  readonly requests: readonly FakeRequest[];
  readonly inFlight: number;
  readonly peakInFlight: number;
  /** Answers the requests held by [[gate]], and from now on holds none until reset(). */
  openGate(): void;
  /** The most requests for `model` that were in flight at once. */
  peakInFlightFor(model: string): number;
  /** Requests whose prompt contains `promptSubstring`. */
  countFor(promptSubstring: string): number;
  /** Forget the log, the per-prompt counts and the peak. */
  reset(): void;
  close(): Promise<void>;
}

interface ChatRequestBody {
  model?: string;
  stream?: boolean;
  messages?: { role?: string; content?: unknown }[];
  [key: string]: unknown;
}

export interface Directives {
  latencyMs: number;
  status?: number;
  times: number;
  retryAfter?: string;
  retryAfterMs?: string;
  hang: boolean;
  gate: boolean;
  malformed: boolean;
  reply?: string;
}

const directivePattern = /\[\[([^\]]*)\]\]/g;

/** The directives of a prompt (shared with the Anthropic-shaped fake). */
export const parseDirectives = (prompt: string): Directives => {
  const d: Directives = { latencyMs: 0, times: Number.POSITIVE_INFINITY, hang: false, gate: false, malformed: false };
  if (!prompt.includes('[[')) return d;
  for (const match of prompt.matchAll(directivePattern)) {
    const body = match[1] ?? '';
    if (body.startsWith('reply:')) {
      d.reply = body.slice('reply:'.length);
      continue;
    }
    for (const part of body.trim().split(/\s+/)) {
      const colon = part.indexOf(':');
      const name = colon < 0 ? part : part.slice(0, colon);
      const value = colon < 0 ? '' : part.slice(colon + 1);
      if (name === 'latency') d.latencyMs = Number(value);
      else if (name === 'status') d.status = Number(value);
      else if (name === 'times') d.times = Number(value);
      else if (name === 'retry-after') d.retryAfter = value;
      else if (name === 'retry-after-ms') d.retryAfterMs = value;
      else if (name === 'hang') d.hang = true;
      else if (name === 'gate') d.gate = true;
      else if (name === 'malformed') d.malformed = true;
    }
  }
  return d;
};

export const contentText = (content: unknown): string => {
  if (typeof content === 'string') return content;
  // The array form: [{ type: 'text', text }]
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        typeof part === 'object' && part !== null && 'text' in part && typeof part.text === 'string' ? part.text : '',
      )
      .join('');
  }
  return '';
};

const lastUserMessage = (body: ChatRequestBody): string => {
  const messages = body.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === 'user') return contentText(m.content);
  }
  return '';
};

/** A stand-in embedding: how often each letter a–z occurs, so texts with the same words are similar. */
const letterCounts = (text: string): number[] => {
  const counts = new Array<number>(26).fill(0);
  for (const ch of text.toLowerCase()) {
    const i = ch.charCodeAt(0) - 97;
    if (i >= 0 && i < 26) counts[i] = (counts[i] as number) + 1;
  }
  return counts;
};

const approxTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

export const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

export const sendJson = (
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void => {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
};

let completionId = 0;

export const startFakeModelServer = async (options: FakeModelServerOptions = {}): Promise<FakeModelServer> => {
  const recordPayloads = options.recordPayloads ?? true;
  let requests: FakeRequest[] = [];
  let perPrompt = new Map<string, number>();
  let inFlight = 0;
  let peakInFlight = 0;
  let modelInFlight = new Map<string, { now: number; peak: number }>();
  let gateOpen = false;
  let gated: (() => void)[] = [];

  const answer = (res: ServerResponse, body: ChatRequestBody, prompt: string, d: Directives, status: number): void => {
    if (res.destroyed) return;
    if (status !== 200) {
      const headers: Record<string, string> = {};
      if (d.retryAfter !== undefined) headers['retry-after'] = d.retryAfter;
      if (d.retryAfterMs !== undefined) headers['retry-after-ms'] = d.retryAfterMs;
      sendJson(res, status, { error: { message: `fake error ${status}`, type: 'fake_error', code: status } }, headers);
      return;
    }
    if (d.malformed) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id": "broken", "choices": [ this is not json');
      return;
    }
    const scripted = options.respond?.(prompt);
    const tool = (body.tools as { function?: { name?: string } }[] | undefined)?.[0]?.function?.name;
    if (scripted && 'toolInput' in scripted && tool) {
      const usage = options.usage ?? { prompt_tokens: approxTokens(prompt), completion_tokens: 10 };
      const call = {
        id: 'call_1',
        type: 'function',
        function: { name: tool, arguments: JSON.stringify(scripted.toolInput) },
      };
      sendJson(res, 200, {
        id: `chatcmpl-fake-${++completionId}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model ?? 'fake-model',
        choices: [
          { index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' },
        ],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      });
      return;
    }
    const content =
      scripted && 'text' in scripted
        ? scripted.text
        : (d.reply ?? `echo: ${prompt.replace(directivePattern, '').trim()}`);
    const usage = options.usage ?? { prompt_tokens: approxTokens(prompt), completion_tokens: approxTokens(content) };
    const fullUsage = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
    const id = `chatcmpl-fake-${++completionId}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model ?? 'fake-model';
    if (body.stream === true) {
      const chunk = (delta: object, finish: string | null, extra: object = {}) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(
        `${chunk({ role: 'assistant', content }, null)}${chunk({}, 'stop', { usage: fullUsage })}data: [DONE]\n\n`,
      );
      return;
    }
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: fullUsage,
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const at = Date.now();
    const raw = await readBody(req);
    if (req.method === 'POST' && req.url?.endsWith('/embeddings')) {
      const input = (JSON.parse(raw) as { input: string[]; model?: string }).input;
      requests.push({ prompt: input.join('\n'), status: 200, at, headers: req.headers, body: { model: 'embeddings' } });
      sendJson(res, 200, {
        object: 'list',
        data: input.map((text, index) => ({ object: 'embedding', index, embedding: letterCounts(text) })),
        usage: { prompt_tokens: input.length * 8, total_tokens: input.length * 8 },
      });
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
      return;
    }
    let body: ChatRequestBody;
    try {
      body = JSON.parse(raw) as ChatRequestBody;
    } catch {
      sendJson(res, 400, { error: { message: 'request body is not JSON' } });
      return;
    }
    const prompt = lastUserMessage(body);
    const d = parseDirectives(prompt);
    const seen = perPrompt.get(prompt) ?? 0;
    perPrompt.set(prompt, seen + 1);
    const overCap = options.maxConcurrent !== undefined && inFlight > options.maxConcurrent;
    const hang = d.hang && seen < d.times;
    const status = hang ? 0 : overCap ? 429 : d.status !== undefined && seen < d.times ? d.status : 200;
    if (overCap) d.retryAfterMs ??= '50';
    const entry: FakeRequest = recordPayloads
      ? { prompt, status, at, headers: req.headers, body }
      : { prompt, status, at, headers: {}, body: {} };
    requests.push(entry);
    const model = modelInFlight.get(body.model ?? '') ?? { now: 0, peak: 0 };
    modelInFlight.set(body.model ?? '', model);
    model.now++;
    model.peak = Math.max(model.peak, model.now);
    res.once('close', () => {
      model.now--;
      entry.endedAt = Date.now();
    });
    if (hang) return; // held open until the client goes away or close() drops it
    const delay = overCap
      ? 0
      : (options.latencyMs ?? 0) + (options.modelLatencyMs?.[body.model ?? ''] ?? 0) + d.latencyMs;
    const reply = () => {
      if (delay > 0) setTimeout(() => answer(res, body, prompt, d, status), delay);
      else answer(res, body, prompt, d, status);
    };
    if (d.gate && !gateOpen) gated.push(reply);
    else reply();
  };

  const server: Server = createServer((req, res) => {
    inFlight++;
    if (inFlight > peakInFlight) peakInFlight = inFlight;
    // 'close' fires once whether the response finished or the client aborted, so the count cannot drift.
    res.once('close', () => {
      inFlight--;
    });
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } });
      else res.destroy();
    });
  });
  // The benchmark opens many keep-alive connections at once; the default backlog would refuse some.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: options.port ?? 0, backlog: 4096 }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    get requests() {
      return requests;
    },
    get inFlight() {
      return inFlight;
    },
    peakInFlightFor: (model) => modelInFlight.get(model)?.peak ?? 0,
    openGate: () => {
      gateOpen = true;
      for (const reply of gated.splice(0)) reply();
    },
    get peakInFlight() {
      return peakInFlight;
    },
    countFor: (promptSubstring) => {
      let n = 0;
      for (const r of requests) if (r.prompt.includes(promptSubstring)) n++;
      return n;
    },
    reset: () => {
      requests = [];
      perPrompt = new Map();
      modelInFlight = new Map();
      peakInFlight = inFlight;
      gateOpen = false;
      gated = [];
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Hanging requests and idle keep-alive sockets would otherwise hold close() open forever.
        server.closeAllConnections();
      }),
  };
};
