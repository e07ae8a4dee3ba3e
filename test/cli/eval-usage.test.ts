// Per-call usage as providers report it — cache reads and writes, reasoning (thinking) tokens — through the built
// CLI against fake OpenAI-compatible, Anthropic and plain HTTP servers: kept in each row, summed in summary.json,
// and priced from [pricing] with reasoning billed as output.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import type { IndexRow } from '../../src/bundle/row.js';
import type { Summary } from '../../src/bundle/summary.js';
import { runCli } from '../support/cli.js';
import { type FakeAnthropicServer, startFakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { type FakeHttpServer, startFakeHttpServer } from '../support/fake-http-server.js';
import { type FakeModelServer, sendJson, startFakeModelServer } from '../support/fake-model-server.js';
import { onlyBundle, tempProject } from '../support/project.js';

let openaiServer: FakeModelServer;
let claude: FakeAnthropicServer;
let agent: FakeHttpServer;
beforeAll(async () => {
  openaiServer = await startFakeModelServer({
    usage: {
      prompt_tokens: 100,
      completion_tokens: 50,
      prompt_tokens_details: { cached_tokens: 40 },
      completion_tokens_details: { reasoning_tokens: 30 },
    },
  });
  claude = await startFakeAnthropicServer({
    usage: {
      input_tokens: 10,
      output_tokens: 70,
      cache_creation_input_tokens: 5,
      cache_read_input_tokens: 20,
      output_tokens_details: { thinking_tokens: 60 },
    },
  });
  agent = await startFakeHttpServer((_req, res) =>
    sendJson(res, 200, { text: 'ok', usage: { in: 300, out: 20, cached: 200, written: 50, thought: 15 } }),
  );
});
afterAll(async () => {
  await Promise.all([openaiServer.close(), claude.close(), agent.close()]);
});

describe('usage and cost per call', () => {
  it('keeps cache read/write and reasoning tokens per case and per run, and prices them exactly', async () => {
    const p = tempProject({
      'proctor.toml': `
[targets.reasoner]
kind = "openai"
base_url = "${openaiServer.url}"
model = "o-model"
api_key = "sk-o"

[targets.claude]
kind = "anthropic"
base_url = "${claude.url}"
model = "claude-fake"
api_key = "sk-ant"
max_tokens = 100
thinking = { budget_tokens = 2048 }
cache = "auto"

[targets.agent]
kind = "http"
url = "${agent.url}/ask"
model = "agent-1"
response = { output = "$.text", usage = { input = "$.usage.in", output = "$.usage.out", cache_read = "$.usage.cached", cache_write = "$.usage.written", reasoning = "$.usage.thought" } }

[pricing."openai:o-model"]
input = 2.0
output = 10.0
cache_read = 0.5

[pricing."anthropic:claude-fake"]
input = 3.0
output = 15.0
cache_read = 0.3
cache_write = 3.75

[pricing."http:agent-1"]
input = 1.0
output = 2.0
cache_read = 0.1
cache_write = 1.25
`,
      'usage.eval.yaml': `targets: [reasoner, claude, agent]
prompts: ["think"]
tests: [{ id: t, assert: [{ type: cost, value: 0.01 }] }]
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'usage.eval.yaml'], { cwd: p.dir });
      expect(run.code, run.stderr).toBe(0);
      const bundle = onlyBundle(p);
      const rows = new Map<string, IndexRow>(readIndex(bundle).rows.map((r) => [r.identity.target, r]));

      // OpenAI: 40 of the 100 input tokens were cached reads; 30 of the 50 output tokens were reasoning.
      const o = rows.get('reasoner')?.usage;
      expect(o).toMatchObject({ input_tokens: 100, output_tokens: 50, cache_read_tokens: 40, reasoning_tokens: 30 });
      expect(o?.cost_usd).toBeCloseTo((60 * 2 + 40 * 0.5 + 50 * 10) / 1e6, 12);

      // Anthropic with extended thinking and automatic caching: the budget and cache_control are sent, and the
      // reply's thinking tokens are counted.
      const sent = claude.requests.at(-1)?.body;
      expect(sent?.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
      expect(sent?.cache_control).toEqual({ type: 'ephemeral' });
      expect(sent?.max_tokens).toBe(100 + 2048);
      const a = rows.get('claude')?.usage;
      expect(a).toMatchObject({
        input_tokens: 35,
        output_tokens: 70,
        cache_read_tokens: 20,
        cache_write_tokens: 5,
        reasoning_tokens: 60,
      });
      expect(a?.cost_usd).toBeCloseTo((10 * 3 + 20 * 0.3 + 5 * 3.75 + 70 * 15) / 1e6, 12);

      // HTTP: each kind of token picked by its own selector; `input` counts every input token, cached ones too.
      const h = rows.get('agent')?.usage;
      expect(h).toMatchObject({
        input_tokens: 300,
        output_tokens: 20,
        cache_read_tokens: 200,
        cache_write_tokens: 50,
        reasoning_tokens: 15,
      });
      expect(h?.cost_usd).toBeCloseTo((50 * 1 + 200 * 0.1 + 50 * 1.25 + 20 * 2) / 1e6, 12);

      const summary = JSON.parse(readFileSync(join(bundle, 'summary.json'), 'utf8')) as Summary;
      expect(summary.usage).toMatchObject({
        input_tokens: 435,
        output_tokens: 140,
        cache_read_tokens: 260,
        cache_write_tokens: 55,
        reasoning_tokens: 105,
      });
      expect(summary.usage.cost_usd).toBeCloseTo(
        [o, a, h].reduce((sum, u) => sum + (u?.cost_usd ?? Number.NaN), 0),
        12,
      );
    } finally {
      p.remove();
    }
  });

  it('warns once that an http target naming no model, whose replies carry no cost, costs an unknown amount', async () => {
    const p = tempProject({
      'free.eval.yaml': `targets:
  - { label: api, kind: http, url: "${agent.url}/ask", response: { output: "$.text", usage: { input: "$.usage.in" } } }
  - { label: priced, kind: http, url: "${agent.url}/ask", response: { output: "$.text", usage: { cost: "$.usage.in" } } }
prompts: ["a", "b"]
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'free.eval.yaml'], { cwd: p.dir });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr.match(/warning: no price for target "api"/g)).toHaveLength(1);
      expect(run.stderr).toContain('model = "NAME"');
      expect(run.stderr).not.toContain('"priced"');
      const rows = readIndex(onlyBundle(p)).rows;
      for (const r of rows) expect(r.usage.cost_usd).toBe(r.identity.target === 'api' ? null : 300);
    } finally {
      p.remove();
    }
  });
});
