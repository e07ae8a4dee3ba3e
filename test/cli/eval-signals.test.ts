import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../src/bundle/summary.js';
import { startCli, waitFor } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { tempProject } from '../support/project.js';

let server: FakeModelServer;

beforeAll(async () => {
  server = await startFakeModelServer({ latencyMs: 300 });
});
afterAll(async () => {
  await server.close();
});

const indexLines = (bundle: string): string[] => {
  const file = join(bundle, 'index.jsonl');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
};

describe('signals', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal} mid-run cancels in-flight cases, writes the summary and exits ${code}`, async () => {
      const tests = Array.from({ length: 40 }, (_, i) => `  - { id: t${i}, vars: { q: "question ${i}" } }`).join('\n');
      const project = tempProject({
        'a.eval.yaml': `targets:\n  - { kind: openai, base_url: "${server.url}", model: m, api_key: k }\nprompts: ["{{ q }}"]\ndefault_test:\n  assert: [{ type: contains, value: question }]\ntests:\n${tests}\n`,
      });
      const bundle = project.path('out');
      const cli = startCli(['eval', 'run', '-j', '4', '-o', 'out'], { cwd: project.dir });
      await waitFor(() => indexLines(bundle).length >= 4);
      cli.child.kill(signal);
      const result = await cli.done;
      expect(result.code, result.stderr).toBe(code);
      const lines = indexLines(bundle);
      const rows = lines.map((l) => JSON.parse(l) as { outcome: string; key: string });
      expect(rows.length).toBeGreaterThanOrEqual(4);
      expect(rows.length).toBeLessThan(40);
      expect(new Set(rows.map((r) => r.key)).size).toBe(rows.length);
      expect(rows.filter((r) => r.outcome === 'passed').length).toBeGreaterThanOrEqual(4);
      const summary = JSON.parse(readFileSync(join(bundle, 'summary.json'), 'utf8')) as Summary;
      expect(summary.counts.total).toBe(rows.length);
      expect(summary.counts.passed + summary.counts.canceled).toBe(rows.length);
      expect(readdirSync(bundle).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    });
  }

  it('a second SIGINT exits at once, even while a case ignores its cancellation', async () => {
    const project = tempProject({
      // The agent ignores SIGTERM and the target waits two minutes before SIGKILL: only the second signal
      // can end this command before the test's own 30 s limit.
      'agent.sh': "trap '' TERM\necho started > started.txt\nwhile true; do sleep 0.1; done\n",
      'a.eval.yaml': `targets:\n  - { kind: cli, command: "sh agent.sh", kill_grace_s: 120 }\nprompts: [go]\ntests: [{ id: stubborn }]\n`,
    });
    const cli = startCli(['eval', 'run'], { cwd: project.dir, timeoutMs: 30_000 });
    await waitFor(() => project.exists('started.txt'));
    cli.child.kill('SIGINT');
    await waitFor(() => cli.stderr().includes('SIGINT'));
    cli.child.kill('SIGINT');
    const result = await cli.done;
    expect(result.signal).toBeNull();
    expect(result.code).toBe(130);
  });
});
