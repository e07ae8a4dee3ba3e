import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import type { Summary } from '../../src/bundle/summary.js';
import { bundleResult } from '../support/bundle-result.js';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { tempProject } from '../support/project.js';

let target: FakeModelServer;
let judge: FakeModelServer;
beforeAll(async () => {
  target = await startFakeModelServer();
  // Passes only answers that mention Paris.
  judge = await startFakeModelServer({
    respond: (prompt) => ({
      toolInput: { reason: 'checked', pass: prompt.includes('Paris'), score: prompt.includes('Paris') ? 1 : 0 },
    }),
    usage: { prompt_tokens: 10, completion_tokens: 5 },
  });
});
afterAll(async () => {
  await target.close();
  await judge.close();
});

describe('proctor results regrade', () => {
  it('grades stored outputs again with other graders and a judge, calling no target, and compare shows the change', async () => {
    const p = tempProject({
      'proctor.toml': `[targets.grader]
kind = "openai"
base_url = "${judge.url}"
model = "judge-model"
api_key = "sk-j"

[pricing."judge-model"]
input = 1.0
output = 2.0
`,
      'geo.eval.yaml': `targets: [{ label: model, kind: openai, base_url: "${target.url}", model: m, api_key: sk-t }]
prompts: ["{{ q }}"]
tests:
  - { id: paris, vars: { q: "[[reply:Paris]]" }, assert: [{ type: contains, value: Lyon }] }
  - { id: rome, vars: { q: "[[reply:Rome]]" }, assert: [{ type: contains, value: Rome }] }
`,
      'judged.yaml': '- type: llm-rubric\n  value: names the capital of France\n',
    });
    try {
      const first = await runCli(['eval', 'run', 'geo.eval.yaml', '-o', '.proctor/results/first'], { cwd: p.dir });
      expect(first.code, first.stderr).toBe(1);
      const calls = target.requests.length;
      expect(calls).toBe(2);

      const byJudge = ['results', 'regrade', 'first', '--assert', 'judged.yaml', '--judge', 'grader'];
      const again = await runCli([...byJudge, '-o', '.proctor/results/second'], { cwd: p.dir });
      expect(again.code, again.stderr).toBe(1);
      // Not one request reached the target under test; the judge graded both outputs.
      expect(target.requests.length).toBe(calls);
      expect(judge.requests.length).toBe(2);
      const rows = new Map(readIndex(p.path('.proctor/results/second')).rows.map((r) => [r.identity.test, r]));
      expect(rows.get('paris')?.outcome).toBe('passed');
      expect(rows.get('rome')?.outcome).toBe('failed');
      expect(rows.get('paris')?.regrade).toMatchObject({
        source_bundle: 'first',
        source_artifacts: expect.stringMatching(/^cases\//),
      });
      expect(rows.get('paris')?.usage.cost_usd).toBe(0);
      expect(rows.get('paris')?.usage.judge?.cost_usd).toBeCloseTo((10 * 1 + 5 * 2) / 1e6, 12);
      const summary = JSON.parse(readFileSync(p.path('.proctor/results/second/summary.json'), 'utf8')) as Summary;
      expect(summary.counts).toMatchObject({ passed: 1, failed: 1 });
      const grading = bundleResult<{ grading: { judgeCalls: Record<string, { prompt: string }[]> } }>(
        p.path('.proctor/results/second'),
        rows.get('paris') ?? {},
      );
      expect(grading.grading.judgeCalls['llm-rubric']?.[0]?.prompt).toContain('Paris');
      // Both bundles pack their results: the outputs graded again were read from the first one's pack.
      for (const b of ['first', 'second']) expect(existsSync(p.path(`.proctor/results/${b}/cases`)), b).toBe(false);

      const compare = await runCli(['results', 'compare', 'first', 'second'], { cwd: p.dir });
      expect(compare.stdout).toMatch(/fixed \(1\)[\s\S]*paris/);
      expect(compare.stdout).toMatch(/regressed \(1\)[\s\S]*rome/);

      // Only the cases the filters select: by test id and by target label.
      const judgeCalls = judge.requests.length;
      const some = await runCli(
        [...byJudge, '--filter-pattern', '^par', '--filter-targets', '^model$', '-o', '.proctor/results/some'],
        { cwd: p.dir },
      );
      expect(some.code, some.stderr).toBe(0);
      expect(readIndex(p.path('.proctor/results/some')).rows.map((r) => r.identity.test)).toEqual(['paris']);
      expect(judge.requests.length - judgeCalls).toBe(1);
      expect(some.stdout).toContain('regraded 1 case(s)');
      const none = await runCli(['results', 'regrade', 'first', '--filter-pattern', 'lyon', '-o', 'none'], {
        cwd: p.dir,
      });
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('--filter-pattern "lyon" selects no case');
      expect(p.exists('none')).toBe(false);

      // Without --assert: the eval's own (current) assertions, still without a target call.
      const own = await runCli(['results', 'regrade', 'first', '-o', '.proctor/results/third'], { cwd: p.dir });
      expect(own.code).toBe(1);
      expect(target.requests.length).toBe(calls);
      const third = new Map(readIndex(p.path('.proctor/results/third')).rows.map((r) => [r.identity.test, r.outcome]));
      expect(Object.fromEntries(third)).toEqual({ paris: 'failed', rome: 'passed' });
    } finally {
      p.remove();
    }
  }, 60_000);

  it("renders --assert's templates with each case's vars, and refuses a var a case does not have", async () => {
    const p = tempProject({
      'geo.eval.yaml': `targets: [{ label: model, kind: openai, base_url: "${target.url}", model: m, api_key: sk-t }]
prompts: ["{{ q }}"]
tests:
  - { id: paris, vars: { q: "[[reply:Paris]]", city: Paris } }
  - { id: rome, vars: { q: "[[reply:Rome]]", city: Lyon } }
`,
      'city.yaml': '- type: contains\n  value: "{{ city }}"\n',
      'typo.yaml': '- type: equals\n  value: x\n- type: contains\n  value: "{{ cty }}"\n',
    });
    try {
      const first = await runCli(['eval', 'run', 'geo.eval.yaml', '-o', '.proctor/results/first'], { cwd: p.dir });
      expect(first.code, first.stderr).toBe(0);
      const again = await runCli(['results', 'regrade', 'first', '--assert', 'city.yaml', '-o', 'again'], {
        cwd: p.dir,
      });
      expect(again.code, again.stderr).toBe(1);
      const rows = new Map(readIndex(p.path('again')).rows.map((r) => [r.identity.test, r.outcome]));
      expect(Object.fromEntries(rows)).toEqual({ paris: 'passed', rome: 'failed' });
      const typo = await runCli(['results', 'regrade', 'first', '--assert', 'typo.yaml', '-o', 'typo'], {
        cwd: p.dir,
      });
      expect(typo.code).toBe(2);
      expect(typo.stderr).toContain('typo.yaml:4:10');
      expect(typo.stderr).toContain('did you mean {{ city }}');
      expect(p.exists('typo')).toBe(false);
    } finally {
      p.remove();
    }
  });

  it('refuses bad input before grading anything: a judged --assert without a judge, an unknown --judge', async () => {
    const p = tempProject({
      'e.eval.yaml': 'targets: [{ kind: echo }]\nprompts: ["hi"]\n',
      'judged.yaml': '- type: factuality\n  value: hi\n',
    });
    try {
      const first = await runCli(['eval', 'run', 'e.eval.yaml', '-o', '.proctor/results/one'], { cwd: p.dir });
      expect(first.code, first.stderr).toBe(0);
      const noJudge = await runCli(['results', 'regrade', 'one', '--assert', 'judged.yaml'], { cwd: p.dir });
      expect(noJudge.code).toBe(2);
      expect(noJudge.stderr).toContain('judged.yaml:1:3');
      expect(noJudge.stderr).toContain('factuality needs a judge target');
      const unknown = await runCli(['results', 'regrade', 'one', '--judge', 'nobody'], { cwd: p.dir });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('--judge nobody');
      expect(readIndex(p.path('.proctor/results/one')).rows).toHaveLength(1);
    } finally {
      p.remove();
    }
  });
});
