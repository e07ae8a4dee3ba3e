import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexRow } from '../../src/bundle/row.js';
import type { Summary } from '../../src/bundle/summary.js';
import { ProctorError } from '../../src/errors.js';
import { openai } from '../../src/targets/openai.js';
import { defaultRateSettings, RateGate, rateGate } from '../../src/targets/rate-gate.js';
import { runCli, startCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { startFakeHttpServer } from '../support/fake-http-server.js';
import { type FakeModelServer, sendJson, startFakeModelServer } from '../support/fake-model-server.js';
import { indexRows, onlyBundle, tempProject } from '../support/project.js';

// The endpoint allows 5 requests at once and answers 429 above that.
let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer({ maxConcurrent: 5, latencyMs: 10 });
});
afterAll(async () => {
  await server.close();
});

const rejected = (): number => server.requests.filter((r) => r.status === 429).length;

describe('adaptive rate limit (AIMD)', () => {
  it('50 callers over 500 calls: none fails, the limit settles near 5, a judge has its own', async () => {
    server.reset();
    const context = { baseDir: process.cwd(), env: {} };
    const target = openai.create(openai.config().parse({ base_url: server.url, model: 'm1', api_key: 'k1' }), context);
    const judge = openai.create(openai.config().parse({ base_url: server.url, model: 'm1', api_key: 'k1' }), {
      ...context,
      role: 'judge',
    });
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < 500) {
        next++;
        await target.invoke({ prompt: `q${next}`, vars: {} }, new AbortController().signal);
      }
    };
    await Promise.all(Array.from({ length: 50 }, worker));
    const gate = rateGate({ kind: 'openai', url: server.url, apiKey: 'k1', model: 'm1', role: 'target', label: 'x' });
    expect(gate.limit).toBeGreaterThanOrEqual(3);
    // Near the endpoint's 5, far below the 50 callers and the gate's start of 64. Not at most 6: on a loaded machine
    // the client may not keep more than 5 calls in flight, so no 429 cuts a step or two of growth before the end
    // (a full run under load ended at 7).
    expect(gate.limit).toBeLessThanOrEqual(8);
    expect(gate.history.some((e) => e.reason === 'rate_limit')).toBe(true);
    // The judge's gate is untouched by the target's 429s.
    const judgeGate = rateGate({
      kind: 'openai',
      url: server.url,
      apiKey: 'k1',
      model: 'm1',
      role: 'judge',
      label: 'x',
    });
    expect(judgeGate).not.toBe(gate);
    expect(judgeGate.history).toEqual([]);
    await judge.invoke({ prompt: 'j', vars: {} }, new AbortController().signal);
    // The gate starts at 64: the first answers' 429s cut it 64 → 32 → 16 → 8 → 4, an episode each (~85 refused).
    // Once settled it holds the rest back, a refusal now and then as it probes upward (14 of the last 300 here).
    expect(rejected()).toBeLessThan(150);
    expect(server.requests.slice(-300).filter((r) => r.status === 429).length).toBeLessThan(40);
  }, 60_000);

  it('cuts once per episode: a 429 to a call started before the cut, however late it comes, does not cut again', async () => {
    const gate = new RateGate({ ...defaultRateSettings, start: 4, cooldownMs: 50 }, 'slow');
    const signal = new AbortController().signal;
    // Four calls at once, each refused once: the first at once, the others well after the cooldown.
    const call = (delayMs: number) => {
      let refused = false;
      return gate.run(signal, async () => {
        if (!refused) {
          refused = true;
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          throw new ProctorError('rate_limited', '429', { retryAfterMs: 10 });
        }
        return 'ok';
      });
    };
    expect(await Promise.all([call(0), call(200), call(200), call(200)])).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(gate.history.filter((e) => e.reason === 'rate_limit')).toHaveLength(1);
    expect(gate.limit).toBeGreaterThanOrEqual(2);
  });

  it('through the CLI: max_concurrency 50 over 500 cases ends with zero errors and no retries spent', async () => {
    server.reset();
    const p = tempProject({
      'rl.eval.yaml': `
targets: [{ label: api, kind: openai, base_url: "${server.url}", model: m2, api_key: k2 }]
prompts: ["case {{ n }}"]
evaluate_options: { max_concurrency: 50, retries: 0 }
tests: file://cases.jsonl
`,
      'cases.jsonl': `${Array.from({ length: 500 }, (_, n) => JSON.stringify({ vars: { n } })).join('\n')}\n`,
    });
    try {
      const run = await runCli(['eval', 'run', 'rl.eval.yaml'], { cwd: p.dir, timeoutMs: 120_000 });
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      const summary = JSON.parse(readFileSync(join(onlyBundle(p), 'summary.json'), 'utf8')) as Summary;
      expect(summary.counts).toMatchObject({ total: 500, passed: 500, error: 0 });
      expect(rejected()).toBeGreaterThan(0);
      expect(rejected()).toBeLessThan(150);
    } finally {
      p.remove();
    }
  }, 150_000);

  it('a 429 with Retry-After holds the case without spending a retry, and the progress line says until when', async () => {
    server.reset();
    const p = tempProject({
      'wait.eval.yaml': `
targets: [{ label: slowapi, kind: openai, base_url: "${server.url}", model: m3, api_key: k3 }]
prompts: ["wait [[status:429 retry-after:3 times:1]]"]
evaluate_options: { retries: 0 }
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'wait.eval.yaml'], { cwd: p.dir });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/rate-limited by slowapi, resuming in \d/);
      expect(server.requests.map((r) => r.status)).toEqual([429, 200]);
    } finally {
      p.remove();
    }
  }, 30_000);

  it("a judge's limit is its own: a 429 to the judge holds back the judge, named, not the target sharing its endpoint", async () => {
    // One OpenAI-shaped endpoint, model and key for both: the first grading request is refused.
    let refused = false;
    const shared = await startFakeHttpServer((req, res) => {
      const grading = req.body.includes('You grade an output');
      if (grading && !refused) {
        refused = true;
        // Longer than two of the plain progress lines' 2 s apart, so one falls inside the pause on a loaded machine.
        sendJson(res, 429, { error: { message: 'busy' } }, { 'retry-after': '5' });
        return;
      }
      const call = {
        id: 'c1',
        type: 'function',
        function: { name: 'submit_grade', arguments: '{"reason":"ok","pass":true,"score":1}' },
      };
      const message = grading
        ? { role: 'assistant', content: null, tool_calls: [call] }
        : { role: 'assistant', content: 'fine' };
      sendJson(res, 200, {
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'shared',
        choices: [{ index: 0, message, finish_reason: grading ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
    });
    const p = tempProject({
      'proctor.toml': `[targets.grader]
kind = "openai"
base_url = "${shared.url}/v1"
model = "shared"
api_key = "same-key"

[defaults]
judge = "grader"
`,
      'own.eval.yaml': `targets: [{ label: model, kind: openai, base_url: "${shared.url}/v1", model: shared, api_key: same-key }]
prompts: ["hello"]
evaluate_options: { retries: 0 }
tests: [{ assert: [{ type: llm-rubric, value: answers }] }]
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'own.eval.yaml'], { cwd: p.dir });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/rate-limited by grader, resuming in \d/);
      expect(run.stderr).not.toContain('rate-limited by model');
      expect(shared.requests).toHaveLength(3);
    } finally {
      await shared.close();
      p.remove();
    }
  }, 30_000);

  it('a generous endpoint: -j 50 puts its first 50 calls in flight at once, and -j 100 grows the limit past 64 to 100', async () => {
    const wide = await startFakeModelServer({ latencyMs: 100 });
    const cases = (n: number) =>
      `${Array.from({ length: n }, (_, i) => JSON.stringify({ vars: { n: i } })).join('\n')}\n`;
    const evalFile = (prompt: string, tests: string) => `
targets: [{ label: wide, kind: openai, base_url: "${wide.url}", model: w, api_key: kw }]
prompts: ["${prompt}"]
evaluate_options: { retries: 0 }
tests: file://${tests}
`;
    const p = tempProject({
      'held.eval.yaml': evalFile('held {{ n }} [[gate]]', 'held.jsonl'),
      'held.jsonl': cases(50),
      'wide.eval.yaml': evalFile('wide {{ n }}', 'wide.jsonl'),
      'wide.jsonl': cases(250),
    });
    const held = startCli(['eval', 'run', 'held.eval.yaml', '-j', '50', '-o', 'held'], { cwd: p.dir });
    try {
      // Every answer is held, so none comes back to grow the limit: what is in flight is what the limit starts at.
      await eventually(async () => (wide.inFlight === 50 ? true : undefined));
      wide.openGate();
      const done = await held.done;
      expect(done.code, done.stderr).toBe(0);
      wide.reset();
      const hundred = await runCli(['eval', 'run', 'wide.eval.yaml', '-j', '100', '-o', 'hundred'], { cwd: p.dir });
      expect(hundred.code, hundred.stderr).toBe(0);
      expect(wide.peakInFlight).toBe(100);
      expect(wide.requests.filter((r) => r.status === 429)).toEqual([]);
    } finally {
      held.child.kill('SIGKILL');
      p.remove();
      await wide.close();
    }
  }, 60_000);

  it('per-target `rate`: max bounds the calls in flight, retry_429 = false leaves a 429 to --retries, no drift', async () => {
    server.reset();
    const evalFile = (rate: string) => `
targets: [{ label: paced, kind: openai, base_url: "${server.url}", model: m4, api_key: k4, rate: ${rate} }]
prompts: ["paced {{ n }}"]
evaluate_options: { max_concurrency: 10, retries: 0 }
tests: file://cases.jsonl
`;
    const p = tempProject({
      'paced.eval.yaml': evalFile('{ start: 2, max: 2 }'),
      'cases.jsonl': `${Array.from({ length: 20 }, (_, n) => JSON.stringify({ vars: { n } })).join('\n')}\n`,
      'strict.eval.yaml': `
targets: [{ label: strict, kind: openai, base_url: "${server.url}", model: m5, api_key: k5, rate: { retry_429: false } }]
prompts: ["strict [[status:429 retry-after-ms:10 times:1]]"]
evaluate_options: { retries: 0 }
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'paced.eval.yaml', '-o', 'paced'], { cwd: p.dir });
      expect(run.code, run.stderr).toBe(0);
      expect(server.peakInFlightFor('m4')).toBe(2);
      expect(rejected()).toBe(0);
      // Pacing changes no result: a resume after tuning it finds every case done, not drifted.
      p.write('paced.eval.yaml', evalFile('{ max: 3, decrease: 0.8 }'));
      const resumed = await runCli(['eval', 'run', 'paced.eval.yaml', '--resume', 'paced'], { cwd: p.dir });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('skipping 20 completed');

      const strict = await runCli(['eval', 'run', 'strict.eval.yaml', '-o', 'strict'], { cwd: p.dir });
      expect(strict.code).toBe(1);
      const [row] = indexRows<IndexRow>(p.path('strict'));
      expect(row?.error?.kind).toBe('rate_limited');
      expect(server.countFor('strict')).toBe(1);

      p.write('bad.eval.yaml', evalFile('{ min: 4, max: 2 }').replace('paced {{ n }}', 'bad'));
      const bad = await runCli(['eval', 'validate', 'bad.eval.yaml'], { cwd: p.dir });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/bad\.eval\.yaml:2:\d+: .*min must not be above max/);
    } finally {
      p.remove();
    }
  }, 60_000);
});
