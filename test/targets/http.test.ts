import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../src/targets/http.js';
import type { Target } from '../../src/targets/target.js';
import { type FakeHttpServer, startFakeHttpServer } from '../support/fake-http-server.js';
import { sendJson } from '../support/fake-model-server.js';
import { tempProject } from '../support/project.js';
import { proctorError } from '../support/rejection.js';

const never = (): AbortSignal => new AbortController().signal;

let server: FakeHttpServer;
const busy = new Map<string, number>();
beforeAll(async () => {
  server = await startFakeHttpServer((req, res) => {
    if (req.url.startsWith('/chat/')) {
      const message = (JSON.parse(req.body) as { message: string }).message;
      sendJson(res, 200, { reply: { text: `re: ${message}` }, usage: { in: 12, out: 3 }, cost: 0.002 });
    } else if (req.url === '/sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        'data: {"delta":"Hel"}\n\ndata: {"delta":"lo"}\n\ndata: {"delta":"!","usage":{"in":4,"out":2}}\n\ndata: [DONE]\n\n',
      );
    } else if (req.url === '/busy') {
      const n = busy.get(req.url) ?? 0;
      busy.set(req.url, n + 1);
      if (n === 0) sendJson(res, 503, { error: 'later' }, { 'retry-after': '2' });
      else sendJson(res, 200, { text: 'ok' });
    } else if (req.url === '/slow') {
      // Never answers: the target's timeout must end the call.
    } else if (req.url === '/big') sendJson(res, 200, { text: 'x'.repeat(5000) });
    else if (req.url === '/text') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('plain words');
    } else sendJson(res, 404, { error: 'no' });
  });
});
afterAll(async () => {
  await server.close();
});

const makeTarget = (cfg: Record<string, unknown>, baseDir = process.cwd()): Target =>
  http.create(http.config().parse(cfg), { baseDir, env: {} });

describe('http target', () => {
  it('templates URL (encoded), headers and body; picks output and usage with selectors', async () => {
    const target = makeTarget({
      url: `${server.url}/chat/{{ vars.tenant }}`,
      headers: { authorization: 'Bearer tok-123' },
      body: '{"message": {{ prompt | json }}}',
      response: { output: '$.reply.text', usage: { input: '$.usage.in', output: '$.usage.out', cost: '$.cost' } },
    });
    const out = await target.invoke({ prompt: 'say "hi"', vars: { tenant: 'a b/c' } }, never());
    expect(out.text).toBe('re: say "hi"');
    expect(out.usage).toEqual({ inputTokens: 12, outputTokens: 3, costUsd: 0.002 });
    const seen = server.requests.at(-1);
    expect(seen?.url).toBe('/chat/a%20b%2Fc');
    expect(seen?.headers.authorization).toBe('Bearer tok-123');
    expect(JSON.parse(seen?.body ?? '')).toEqual({ message: 'say "hi"' });
  });

  it('assembles an SSE stream from each event and takes the usage the events carry', async () => {
    const out = await makeTarget({
      url: `${server.url}/sse`,
      method: 'GET',
      response: { format: 'sse', output: '$.delta', usage: { input: '$.usage.in', output: '$.usage.out' } },
    }).invoke({ prompt: 'x', vars: {} }, never());
    expect(out.text).toBe('Hello!');
    expect(out.usage).toMatchObject({ inputTokens: 4, outputTokens: 2, costUsd: null });
  });

  it('classifies 503 with Retry-After, a timeout, an oversize body and a missing selector', async () => {
    const unavailable = await proctorError(
      makeTarget({ url: `${server.url}/busy` }).invoke({ prompt: 'x', vars: {} }, never()),
    );
    expect(unavailable.kind).toBe('http_5xx');
    expect(unavailable.detail.retryAfterMs).toBe(2000);
    const slow = await proctorError(
      makeTarget({ url: `${server.url}/slow`, timeout_s: 0.2 }).invoke({ prompt: 'x', vars: {} }, never()),
    );
    expect(slow.kind).toBe('timeout');
    const big = await proctorError(
      makeTarget({ url: `${server.url}/big`, max_response_bytes: 1000 }).invoke({ prompt: 'x', vars: {} }, never()),
    );
    expect(big.kind).toBe('malformed_output');
    const missing = await proctorError(
      makeTarget({ url: `${server.url}/big`, response: { output: '$.nope' } }).invoke(
        { prompt: 'x', vars: {} },
        never(),
      ),
    );
    expect(missing.kind).toBe('malformed_output');
  });

  it('hands the response to a file:// transform', async () => {
    const p = tempProject({
      'pick.mjs':
        "export const pick = (body, ctx) => ({ output: body.toUpperCase() + ' for ' + ctx.vars.who, usage: { input: 1, output: 2 } });\n",
    });
    try {
      const out = await makeTarget(
        { url: `${server.url}/text`, response: { format: 'text' }, output_transform: 'file://pick.mjs#pick' },
        p.dir,
      ).invoke({ prompt: 'x', vars: { who: 'me' } }, never());
      expect(out.text).toBe('PLAIN WORDS for me');
      expect(out.usage).toMatchObject({ inputTokens: 1, outputTokens: 2 });
    } finally {
      p.remove();
    }
  });

  it('refuses a selector outside the subset when the config is read', () => {
    expect(http.config().safeParse({ url: 'http://x', response: { output: 'reply.text' } }).success).toBe(false);
  });
});
