import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexRow } from '../../src/bundle/row.js';
import { anthropic } from '../../src/targets/anthropic.js';
import { priceUsage } from '../../src/targets/cost.js';
import type { Target } from '../../src/targets/target.js';
import { runCli } from '../support/cli.js';
import { type FakeAnthropicServer, startFakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { indexRows, onlyBundle, tempProject } from '../support/project.js';
import { proctorError } from '../support/rejection.js';

const never = (): AbortSignal => new AbortController().signal;

let server: FakeAnthropicServer;
beforeAll(async () => {
  server = await startFakeAnthropicServer({
    usage: { input_tokens: 10, output_tokens: 7, cache_creation_input_tokens: 5, cache_read_input_tokens: 20 },
    respond: (prompt) =>
      prompt.includes('grade me')
        ? { toolInput: { choice: 'C', reason: 'same' } }
        : prompt.includes('weather in')
          ? { toolInput: { city: 'Paris' } }
          : undefined,
  });
});
afterAll(async () => {
  await server.close();
});

const makeTarget = (extra: Record<string, unknown> = {}): Target =>
  anthropic.create(
    anthropic.config().parse({ base_url: server.url, model: 'claude-fake', api_key: 'sk-ant-test', ...extra }),
    { baseDir: process.cwd(), env: {} },
  );

describe('anthropic target', () => {
  it('sends system, temperature, max_tokens and the key; maps cache read/write usage and prices it', async () => {
    const out = await makeTarget({ system: 'be brief', temperature: 0, max_tokens: 64 }).invoke(
      { prompt: 'hello', vars: {} },
      never(),
    );
    expect(out.text).toBe('echo: hello');
    const sent = server.requests.at(-1);
    expect(sent?.body.system).toEqual([{ type: 'text', text: 'be brief' }]);
    expect(sent?.body.max_tokens).toBe(64);
    expect(sent?.headers['x-api-key']).toBe('sk-ant-test');
    expect(out.usage).toMatchObject({ inputTokens: 35, outputTokens: 7, cacheReadTokens: 20, cacheWriteTokens: 5 });
    expect(out.usage.costUsd).toBeNull();
    // 10 fresh input at $3/M, 20 cache reads at $0.3/M, 5 cache writes at $3.75/M, 7 output at $15/M.
    const priced = priceUsage(out.usage, { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 });
    expect(priced.costUsd).toBeCloseTo((10 * 3 + 20 * 0.3 + 5 * 3.75 + 7 * 15) / 1e6, 12);
  });

  it("sends a chat prompt's turns, its system message after the target's own", async () => {
    const messages = [
      { role: 'system' as const, content: 'chat system' },
      { role: 'user' as const, content: 'q1' },
      { role: 'assistant' as const, content: 'a1' },
      { role: 'user' as const, content: 'q2' },
    ];
    const out = await makeTarget({ system: 'target system' }).invoke({ prompt: 'q2', vars: {}, messages }, never());
    expect(out.text).toBe('echo: q2');
    const sent = server.requests.at(-1)?.body;
    expect(sent?.system).toEqual([
      { type: 'text', text: 'target system' },
      { type: 'text', text: 'chat system' },
    ]);
    expect(sent?.messages?.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(out.transcript.map((m) => m.content)).toEqual([
      'target system',
      'chat system',
      'q1',
      'a1',
      'q2',
      'echo: q2',
    ]);
  });

  it('forces a tool call when asked for structured output, and flags a max_tokens stop as truncated', async () => {
    const tool = { name: 'submit_grade', description: 'grade', schema: { type: 'object', properties: {} } };
    const graded = await makeTarget().invoke({ prompt: 'grade me', vars: {}, tool }, never());
    expect(graded.toolInput).toEqual({ choice: 'C', reason: 'same' });
    expect(server.requests.at(-1)?.body.tool_choice).toMatchObject({ type: 'tool', name: 'submit_grade' });
    const cut = await makeTarget().invoke({ prompt: 'long [[stop:max_tokens]]', vars: {} }, never());
    expect(cut.truncated).toBe(true);
  });

  it('with extended thinking, which cannot be forced to call a tool, offers the judge tool alone for it to call', async () => {
    const tool = { name: 'submit_grade', description: 'grade', schema: { type: 'object', properties: {} } };
    const thinker = makeTarget({ thinking: { budget_tokens: 1024 } });
    const graded = await thinker.invoke({ prompt: 'grade me', vars: {}, tool }, never());
    expect(graded.toolInput).toEqual({ choice: 'C', reason: 'same' });
    const sent = server.requests.at(-1)?.body;
    expect(sent?.tool_choice).toEqual({ type: 'auto' });
    expect(sent?.tools?.map((t) => t.name)).toEqual(['submit_grade']);
  });

  it("offers the target's own tools for the model to choose, and a reply that only calls one is that call", async () => {
    const tools = [
      { name: 'get_weather', description: 'weather by city', parameters: { type: 'object', properties: { city: {} } } },
    ];
    const out = await makeTarget({ tools }).invoke({ prompt: 'weather in Paris?', vars: {} }, never());
    expect(JSON.parse(out.text)).toEqual([{ name: 'get_weather', input: { city: 'Paris' } }]);
    const sent = server.requests.at(-1)?.body as { tools?: unknown[]; tool_choice?: unknown };
    expect(sent.tools).toEqual([
      { name: 'get_weather', description: 'weather by city', input_schema: tools[0]?.parameters },
    ]);
    expect(sent.tool_choice).toEqual({ type: 'auto' });
    // A judge's forced tool replaces the target's own.
    const grade = { name: 'submit_grade', description: 'grade', schema: { type: 'object', properties: {} } };
    const graded = await makeTarget({ tools }).invoke({ prompt: 'grade me', vars: {}, tool: grade }, never());
    expect(graded.toolInput).toEqual({ choice: 'C', reason: 'same' });
    expect((server.requests.at(-1)?.body.tools ?? []).map((t) => t.name)).toEqual(['submit_grade']);
  });

  it('waits out a 429 with retry-after: 1 inside the call, without failing it', async () => {
    const started = Date.now();
    const out = await makeTarget({ model: 'claude-429' }).invoke(
      { prompt: 'busy [[status:429 retry-after:1 times:1]]', vars: {} },
      never(),
    );
    expect(out.text).toContain('busy');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(server.requests.filter((r) => r.prompt.includes('busy')).map((r) => r.status)).toEqual([429, 200]);
  });

  it('classifies 529 as a retryable http_5xx keeping its Retry-After, and 400 as not retryable', async () => {
    const overloaded = await proctorError(
      makeTarget().invoke({ prompt: 'x [[status:529 retry-after:2]]', vars: {} }, never()),
    );
    expect(overloaded.kind).toBe('http_5xx');
    expect(overloaded.retryable).toBe(true);
    expect(overloaded.detail.retryAfterMs).toBe(2000);
    const bad = await proctorError(makeTarget().invoke({ prompt: 'x [[status:400]]', vars: {} }, never()));
    expect(bad.retryable).toBe(false);
  });

  it('through the CLI: a 529 is retried after its Retry-After, a 400 is tried once and is the error', async () => {
    const p = tempProject({
      'claude.eval.yaml': `targets: [{ label: claude, kind: anthropic, base_url: "${server.url}", model: claude-cli, api_key: sk-a }]
prompts: ["{{ q }}"]
evaluate_options: { retries: 2 }
tests:
  - { id: overloaded, vars: { q: "cli-overloaded [[status:529 retry-after:1 times:1]]" } }
  - { id: bad, vars: { q: "cli-bad [[status:400]]" } }
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'claude.eval.yaml'], { cwd: p.dir });
      expect(run.code).toBe(1);
      const statuses = (marker: string) =>
        server.requests.filter((r) => r.prompt.includes(marker)).map((r) => r.status);
      expect(statuses('cli-overloaded')).toEqual([529, 200]);
      expect(statuses('cli-bad')).toEqual([400]);
      const overloaded = server.requests.filter((r) => r.prompt.includes('cli-overloaded'));
      expect((overloaded[1]?.at ?? 0) - (overloaded[0]?.at ?? 0)).toBeGreaterThanOrEqual(1000);
      const rows = new Map(indexRows<IndexRow>(onlyBundle(p)).map((r) => [r.identity.test, r]));
      expect(rows.get('overloaded')).toMatchObject({ outcome: 'passed', attempts: 2 });
      expect(rows.get('bad')).toMatchObject({ outcome: 'error', attempts: 1 });
    } finally {
      p.remove();
    }
  }, 30_000);
});
