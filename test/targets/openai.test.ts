// biome-ignore-all lint/suspicious/noTemplateCurlyInString: a literal ${VAR} reference is under test.
import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CanceledError } from '../../src/errors.js';
import { openai } from '../../src/targets/openai.js';
import type { Target } from '../../src/targets/target.js';
import { type FakeHttpServer, startFakeHttpServer } from '../support/fake-http-server.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { proctorError, rejection } from '../support/rejection.js';

const context = { baseDir: process.cwd(), env: {} };
// A fresh signal per call, as the engine gives each case its own.
const never = (): AbortSignal => new AbortController().signal;

const makeTarget = (url: string, extra: Record<string, unknown> = {}): Target =>
  openai.create(openai.config().parse({ base_url: url, model: 'fake-model', api_key: 'sk-test', ...extra }), context);

/** A port nothing listens on: bind one, then let it go. */
const closedPort = async (): Promise<number> => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
};

let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer({ usage: { prompt_tokens: 11, completion_tokens: 7 } });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

describe('openai target', () => {
  it('answers with text, usage, transcript and duration', async () => {
    const target = makeTarget(server.url, { system: 'be brief', temperature: 0.2, max_tokens: 50 });
    const out = await target.invoke({ prompt: 'hello there', vars: {} }, never());
    expect(out.text).toBe('echo: hello there');
    // No price is known inside the target: the cost is unknown (null) until [pricing] gives one.
    expect(out.usage).toMatchObject({ inputTokens: 11, outputTokens: 7, costUsd: null });
    expect(out.transcript).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: 'echo: hello there' },
    ]);
    expect(out.durationMs).toBeGreaterThan(0);
    const body = server.requests[0]?.body;
    expect(body?.model).toBe('fake-model');
    expect(body?.temperature).toBe(0.2);
    expect(body?.max_tokens).toBe(50);
  });

  it('uses the reply directive and omits the system message when none is configured', async () => {
    const out = await makeTarget(server.url).invoke({ prompt: 'q [[reply:forty-two]]', vars: {} }, never());
    expect(out.text).toBe('forty-two');
    expect(out.transcript.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('sends the api key and configured headers', async () => {
    await makeTarget(server.url, { headers: { 'x-team': 'evals' } }).invoke({ prompt: 'h', vars: {} }, never());
    const headers = server.requests[0]?.headers;
    expect(headers?.authorization).toBe('Bearer sk-test');
    expect(headers?.['x-team']).toBe('evals');
    expect(headers?.['user-agent']).toBe('proctor');
  });

  it('reads the key from api_key_env when api_key is absent', async () => {
    const target = openai.create(openai.config().parse({ base_url: server.url, model: 'm', api_key_env: 'MY_KEY' }), {
      baseDir: '.',
      env: { MY_KEY: 'sk-env' },
    });
    await target.invoke({ prompt: 'k', vars: {} }, never());
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-env');
  });

  it('classifies 500 as http_5xx and does not retry inside the SDK', async () => {
    const error = await proctorError(
      makeTarget(server.url).invoke({ prompt: 'a [[status:500 times:2]]', vars: {} }, never()),
    );
    expect(error.kind).toBe('http_5xx');
    expect(error.retryable).toBe(true);
    expect(server.countFor('a [[status:500')).toBe(1);
  });

  it('succeeds once the failures of a times:N directive are used up', async () => {
    const target = makeTarget(server.url);
    const prompt = 'b [[status:503 times:1]]';
    expect((await proctorError(target.invoke({ prompt, vars: {} }, never()))).kind).toBe('http_5xx');
    expect((await target.invoke({ prompt, vars: {} }, never())).text).toBe('echo: b');
  });

  it('waits out a 429 for its Retry-After seconds inside the call (no retry of the case spent)', async () => {
    const started = Date.now();
    const out = await makeTarget(server.url, { model: 'rl-c' }).invoke(
      { prompt: 'c [[status:429 retry-after:2 times:1]]', vars: {} },
      never(),
    );
    expect(out.text).toBe('echo: c');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(server.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  it('prefers retry-after-ms', async () => {
    const started = Date.now();
    await makeTarget(server.url, { model: 'rl-d' }).invoke(
      { prompt: 'd [[status:429 retry-after-ms:1500 retry-after:9 times:1]]', vars: {} },
      never(),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(Date.now() - started).toBeLessThan(9000);
  });

  it('classifies another 4xx as internal, not retryable', async () => {
    const error = await proctorError(makeTarget(server.url).invoke({ prompt: 'e [[status:401]]', vars: {} }, never()));
    expect(error.kind).toBe('internal');
    expect(error.retryable).toBe(false);
  });

  it('times out a hanging endpoint after timeout_s', async () => {
    const started = Date.now();
    const error = await proctorError(
      makeTarget(server.url, { timeout_s: 0.2 }).invoke({ prompt: 'f [[hang]]', vars: {} }, never()),
    );
    expect(error.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2000);
    await expect.poll(() => server.inFlight).toBe(0);
  });

  it('cancels a hanging call when the signal aborts', async () => {
    const controller = new AbortController();
    const call = makeTarget(server.url).invoke({ prompt: 'g [[hang]]', vars: {} }, controller.signal);
    await expect.poll(() => server.inFlight).toBe(1);
    controller.abort();
    expect(await rejection(call)).toBeInstanceOf(CanceledError);
    await expect.poll(() => server.inFlight).toBe(0);
  });

  it('refuses to start when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await rejection(makeTarget(server.url).invoke({ prompt: 'x', vars: {} }, controller.signal))).toBeInstanceOf(
      CanceledError,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('classifies a body that is not JSON as malformed_output', async () => {
    const error = await proctorError(makeTarget(server.url).invoke({ prompt: 'h [[malformed]]', vars: {} }, never()));
    expect(error.kind).toBe('malformed_output');
    expect(error.retryable).toBe(false);
  });

  it('classifies a refused connection as network', async () => {
    const port = await closedPort();
    const error = await proctorError(
      makeTarget(`http://127.0.0.1:${port}/v1`).invoke({ prompt: 'i', vars: {} }, never()),
    );
    expect(error.kind).toBe('network');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('runs many calls concurrently on one target', async () => {
    const target = makeTarget(server.url);
    const outs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => target.invoke({ prompt: `p${i} [[latency:50]]`, vars: {} }, never())),
    );
    expect(outs.map((o) => o.text)).toEqual(Array.from({ length: 20 }, (_, i) => `echo: p${i}`));
    expect(server.peakInFlight).toBeGreaterThan(1);
  });

  it('validates base_url, letting an unresolved ${VAR} through', () => {
    expect(() => openai.config().parse({ base_url: 'not a url', model: 'm' })).toThrow(/URL/);
    expect(openai.config().parse({ base_url: '${LLM_URL}', model: 'm' }).base_url).toBe('${LLM_URL}');
  });

  it('rejects unknown config keys', () => {
    expect(() => openai.config().parse({ base_url: server.url, model: 'm', temprature: 1 })).toThrow();
  });
});

describe('openai target: replies as endpoints send them', () => {
  // The next answer: a status and a body, sent as they are.
  let next: { status: number; body: string; headers?: Record<string, string> } = { status: 200, body: '{}' };
  let endpoint: FakeHttpServer;
  beforeAll(async () => {
    endpoint = await startFakeHttpServer((_req, res) => {
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
      res.end(next.body);
    });
  });
  afterAll(async () => {
    await endpoint.close();
  });
  const reply = (body: unknown, status = 200, headers?: Record<string, string>): void => {
    next = { status, body: typeof body === 'string' ? body : JSON.stringify(body), ...(headers ? { headers } : {}) };
  };
  const chat = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    id: 'c1',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
    ...extra,
  });
  const call = (extra: Record<string, unknown> = {}, input: Record<string, unknown> = {}) =>
    makeTarget(`${endpoint.url}/v1`, extra).invoke({ prompt: 'q', vars: {}, ...input }, never());

  it('counts cached and reasoning tokens and keeps a cost the endpoint reports', async () => {
    reply(
      chat(
        { content: 'a' },
        {
          usage: {
            prompt_tokens: 30,
            completion_tokens: 12,
            prompt_tokens_details: { cached_tokens: 20 },
            completion_tokens_details: { reasoning_tokens: 8 },
            cost: 0.25,
          },
        },
      ),
    );
    const out = await call();
    expect(out.usage).toEqual({
      inputTokens: 30,
      outputTokens: 12,
      costUsd: 0.25,
      cacheReadTokens: 20,
      reasoningTokens: 8,
    });
    expect(endpoint.requests.at(-1)?.url).toBe('/v1/chat/completions');
  });

  it('reads text parts and a refusal, and says when the answer was cut at max_tokens', async () => {
    reply(
      chat({
        content: [
          { type: 'text', text: 'part one, ' },
          { type: 'text', text: 'part two' },
        ],
      }),
    );
    expect((await call()).text).toBe('part one, part two');
    reply(chat({ content: null, refusal: 'I cannot help with that' }));
    expect((await call()).text).toBe('I cannot help with that');
    reply({ choices: [{ message: { content: 'cut sh' }, finish_reason: 'length' }] });
    expect(await call()).toMatchObject({ text: 'cut sh', truncated: true });
  });

  it("offers the target's tools; a reply that only calls them answers with the calls, a forced tool's with its input", async () => {
    const tools = [{ name: 'get_weather', description: 'weather by city', parameters: { type: 'object' } }];
    const toolCall = (name: string, args: string) => ({
      content: null,
      tool_calls: [{ id: 't1', type: 'function', function: { name, arguments: args } }],
    });
    reply(chat(toolCall('get_weather', '{"city":"Paris"}')));
    const out = await call({ tools });
    expect(JSON.parse(out.text)).toEqual([{ name: 'get_weather', input: { city: 'Paris' } }]);
    const sent = JSON.parse(endpoint.requests.at(-1)?.body ?? '{}') as Record<string, unknown>;
    expect(sent.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: 'weather by city', parameters: { type: 'object' } },
      },
    ]);
    expect(sent.tool_choice).toBe('auto');
    reply(chat(toolCall('submit_grade', '{"pass":true}')));
    const grade = { name: 'submit_grade', description: 'grade', schema: { type: 'object' } };
    expect((await call({ tools }, { tool: grade })).toolInput).toEqual({ pass: true });
    expect(JSON.parse(endpoint.requests.at(-1)?.body ?? '{}').tool_choice).toEqual({
      type: 'function',
      function: { name: 'submit_grade' },
    });
  });

  it('calls a 2xx that is not a chat completion malformed_output', async () => {
    for (const body of [{}, { choices: [] }, { choices: [{}] }, chat({ content: 5 }), chat({ tool_calls: [{}] })]) {
      reply(body);
      const error = await proctorError(call());
      expect(error.kind, JSON.stringify(body)).toBe('malformed_output');
    }
    reply(chat({ content: 'a' }, { usage: { prompt_tokens: 'many' } }));
    expect((await proctorError(call())).kind).toBe('malformed_output');
  });

  it("names the endpoint's own message for a 4xx and calls a 503 http_5xx", async () => {
    reply({ error: { message: 'no such model: fake-model', type: 'invalid_request_error' } }, 404);
    const missing = await proctorError(call());
    expect(missing.kind).toBe('internal');
    expect(missing.message).toContain('no such model: fake-model');
    reply('overloaded', 503, { 'retry-after': '3' });
    const busy = await proctorError(call());
    expect(busy.kind).toBe('http_5xx');
  });
});
