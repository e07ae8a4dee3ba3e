import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import type { Summary } from '../../src/bundle/summary.js';
import { bundleResult } from '../support/bundle-result.js';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { filesContaining } from '../support/files.js';
import { tempProject } from '../support/project.js';

let server: FakeModelServer;

beforeAll(async () => {
  server = await startFakeModelServer({ usage: { prompt_tokens: 11, completion_tokens: 7 } });
});
afterAll(async () => {
  await server.close();
});

const openaiEval = (tests: string, extra = '') => `
targets:
  - label: model
    kind: openai
    base_url: ${server.url}
    model: fake-1
    api_key: \${FAKE_KEY}
prompts: ["{{ q }}"]
${extra}
tests:
${tests}
`;

const bundleOf = (dir: string) => {
  const results = join(dir, '.proctor', 'results');
  const [id] = readdirSync(results);
  return join(results, id as string);
};

describe('proctor eval run against an OpenAI-compatible server', () => {
  it('grades replies, records usage, and writes a bundle whose summary counts every case', async () => {
    const project = tempProject({
      'a.eval.yaml': openaiEval(`
  - id: good
    vars: { q: "say hi [[reply:hi there]]" }
    assert: [{ type: contains, value: hi }]
  - id: bad
    vars: { q: "say bye [[reply:hello]]" }
    assert: [{ type: contains, value: bye }]
`),
    });
    const result = await runCli(['eval', 'run', 'a.eval.yaml'], {
      cwd: project.dir,
      env: { FAKE_KEY: 'sk-test-secret' },
    });
    expect(result.code, result.stderr).toBe(1);
    const bundle = bundleOf(project.dir);
    const { rows, skipped } = readIndex(bundle);
    expect(skipped).toEqual([]);
    expect(rows.map((r) => [r.identity.test, r.outcome]).sort()).toEqual([
      ['bad', 'failed'],
      ['good', 'passed'],
    ]);
    for (const row of rows) {
      // No [pricing] entry for fake-1: the cost is unknown, never a guessed 0.
      expect(row.usage).toMatchObject({ input_tokens: 11, output_tokens: 7, cost_usd: null });
      expect(row.identity).toMatchObject({ eval: 'a.eval.yaml', prompt: 'p1', target: 'model', sample: 0 });
      expect(row.attempts).toBe(1);
      expect(bundleResult(bundle, row).outcome).toBe(row.outcome);
    }
    const summary = JSON.parse(project.read(join(bundle, 'summary.json').slice(project.dir.length + 1))) as Summary;
    expect(summary.counts).toMatchObject({ total: 2, passed: 1, failed: 1, error: 0 });
    expect(result.stdout).toContain('model');
    // Nothing but their results: packed into results.jsonl, no folder per case; `results show` reads the failure's
    // reason from there.
    expect(existsSync(join(bundle, 'cases'))).toBe(false);
    expect(rows.every((r) => Array.isArray(r.result_at))).toBe(true);
    const show = await runCli(['results', 'show', bundle], { cwd: project.dir });
    expect(show.stdout).toMatch(/bad .*contains: .*bye/);
  });

  it('retries retryable errors with backoff and never retries a graded failure', async () => {
    server.reset();
    const project = tempProject({
      'a.eval.yaml': openaiEval(`
  - id: flaky
    vars: { q: "flaky [[status:500 times:2]] [[reply:ok]]" }
    assert: [{ type: equals, value: ok }]
  - id: limited
    vars: { q: "limited [[status:429 retry-after:1 times:1]] [[reply:ok]]" }
    assert: [{ type: equals, value: ok }]
  - id: broken
    vars: { q: "broken [[status:500]]" }
    assert: [{ type: equals, value: ok }]
  - id: wrong
    vars: { q: "wrong [[reply:nope]]" }
    assert: [{ type: equals, value: ok }]
`),
    });
    const started = Date.now();
    const result = await runCli(['eval', 'run', '--retries', '2'], { cwd: project.dir, env: { FAKE_KEY: 'k' } });
    expect(result.code, result.stderr).toBe(1);
    const rows = new Map(readIndex(bundleOf(project.dir)).rows.map((r) => [r.identity.test, r]));
    expect(rows.get('flaky')).toMatchObject({ outcome: 'passed', attempts: 3 });
    // A 429 is waited out inside the call: it spends no retry.
    expect(rows.get('limited')).toMatchObject({ outcome: 'passed', attempts: 1 });
    expect(rows.get('broken')).toMatchObject({
      outcome: 'error',
      attempts: 3,
      error: { kind: 'http_5xx', retryable: true },
    });
    expect(rows.get('wrong')).toMatchObject({ outcome: 'failed', attempts: 1, error: null });
    expect(server.countFor('flaky')).toBe(3);
    expect(server.countFor('limited')).toBe(2);
    expect(server.countFor('broken')).toBe(3);
    expect(server.countFor('wrong')).toBe(1);
    // Retry-After: 1 second was honoured before the second request of "limited".
    const limited = server.requests.filter((r) => r.prompt.startsWith('limited'));
    expect((limited[1]?.at ?? 0) - (limited[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('classifies a hang past the timeout as a timeout error', async () => {
    const project = tempProject({
      'a.eval.yaml': openaiEval(`
  - id: hangs
    vars: { q: "hang [[hang]]" }
    assert: [{ type: equals, value: ok }]
`),
    });
    const result = await runCli(['eval', 'run', '--timeout', '0.5', '--retries', '1'], {
      cwd: project.dir,
      env: { FAKE_KEY: 'k' },
    });
    expect(result.code, result.stderr).toBe(1);
    const [row] = readIndex(bundleOf(project.dir)).rows;
    expect(row).toMatchObject({ outcome: 'error', attempts: 2, error: { kind: 'timeout' } });
  });

  it('never writes the API key to the store or the bundle', async () => {
    const secret = 'sk-very-secret-value-123';
    const project = tempProject({
      'a.eval.yaml': openaiEval(`
  - id: echo
    vars: { q: "hello" }
    assert: [{ type: contains, value: hello }]
`),
    });
    const result = await runCli(['eval', 'run'], { cwd: project.dir, env: { FAKE_KEY: secret } });
    expect(result.code, result.stderr).toBe(0);
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${secret}`);
    expect(project.exists('.proctor/proctor.db')).toBe(true);
    expect(filesContaining(project.path('.proctor'), secret)).toEqual([]);
  });
});
