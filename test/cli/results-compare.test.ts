import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { type FixtureCase, removeBundles, writeBundle } from '../bundle/fixture.js';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';

afterAll(removeBundles);

// `word` is echoed back; each test passes when the echo equals `want`.
const evalText = (cases: Record<string, [word: string, want: string]>) => `targets: [{ kind: echo }]
prompts: ["{{ word }}"]
tests:
${Object.entries(cases)
  .map(([id, [word, want]]) => `  - { id: ${id}, vars: { word: ${word} }, assert: [{ type: equals, value: ${want} }] }`)
  .join('\n')}
`;

describe('results compare', () => {
  it('reports regressions, fixes and one-sided cases, and exits 1 on a regression', async () => {
    const p = tempProject({
      'a.eval.yaml': evalText({ keep: ['a', 'a'], breaks: ['b', 'b'], heals: ['c', 'x'], gone: ['d', 'd'] }),
    });
    expect((await runCli(['eval', 'run', '-q', '-o', '.proctor/results/base'], { cwd: p.dir })).code).toBe(1);
    p.write('a.eval.yaml', evalText({ keep: ['a', 'a'], breaks: ['b', 'x'], heals: ['c', 'c'], fresh: ['e', 'e'] }));
    expect((await runCli(['eval', 'run', '-q', '-o', 'elsewhere/head'], { cwd: p.dir })).code).toBe(1);

    const text = await runCli(['results', 'compare', 'base', 'elsewhere/head/index.jsonl'], { cwd: p.dir });
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/echo\s+75\.0%\s+75\.0%\s+\+0\.0 pp/);
    expect(text.stdout).toMatch(
      /regressed \(1\)\n {2}echo {2}a\.eval\.yaml · breaks · p1 · 0 {2}passed 1\.000 → failed 0\.000/,
    );
    expect(text.stdout).toMatch(/fixed \(1\)\n {2}echo {2}a\.eval\.yaml · heals/);
    expect(text.stdout).toMatch(/only in base \(1\)\n.*gone/);
    expect(text.stdout).toMatch(/only in head \(1\)\n.*fresh/);
    expect(text.stdout).toMatch(/REGRESSED: 1 case\(s\) passed in base and fail in head, 1 fixed/);

    const json = await runCli(['results', 'compare', '.proctor/results/base', 'elsewhere/head', '--json'], {
      cwd: p.dir,
    });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      schema: 'proctor.compare/1',
      counts: { common: 3, unchanged: 1, regressed: 1, fixed: 1, only_in_base: 1, only_in_head: 1 },
      regressed: [{ identity: { test: 'breaks' }, base: { outcome: 'passed' }, head: { outcome: 'failed' } }],
    });

    const reverse = await runCli(['results', 'compare', 'elsewhere/head', 'base'], { cwd: p.dir });
    expect(reverse.code).toBe(1); // heals regresses the other way round
    const same = await runCli(['results', 'compare', 'base', 'base'], { cwd: p.dir });
    expect(same.code).toBe(0);
    expect(same.stdout).toMatch(/NO REGRESSIONS: 4 common case\(s\)/);
  });

  it('exits 2 with a fix when a bundle does not exist', async () => {
    const p = tempProject({ 'a.eval.yaml': evalText({ keep: ['a', 'a'] }) });
    expect((await runCli(['eval', 'run', '-q', '-o', '.proctor/results/base'], { cwd: p.dir })).code).toBe(0);
    const missing = await runCli(['results', 'compare', 'base', 'nope'], { cwd: p.dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no results bundle "nope"\n {2}fix: /);
    expect((await runCli(['results', 'compare', 'base'], { cwd: p.dir })).code).toBe(2);
  });
});

describe('results compare as a CI gate', () => {
  const passing = (n: number): FixtureCase[] =>
    Array.from({ length: n }, (_, i) => ({ test: `t${i}`, outcome: 'passed' as const }));
  const compareBundles = (base: FixtureCase[], head: FixtureCase[], ...flags: string[]) => {
    const p = tempProject();
    return runCli(['results', 'compare', writeBundle(base), writeBundle(head), ...flags], { cwd: p.dir });
  };

  it('exits 1 when every case of the head was canceled', async () => {
    const head = passing(3).map((c) => ({ ...c, outcome: 'canceled' as const }));
    const r = await compareBundles(passing(3), head);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/GATE FAILED: 3 case\(s\) lost \(canceled or missing in head\); passing 3 → 0/);
  });

  it('exits 1 when the head lacks cases of the base, as after renaming the eval file', async () => {
    const p = tempProject({
      'a.eval.yaml': `targets: [{ kind: echo }]\nprompts: ["{{ w }}"]\ntests:\n  - { vars: { w: x }, assert: [{ type: equals, value: x }] }\n`,
    });
    expect((await runCli(['eval', 'run', '-q', '-o', '.proctor/results/base'], { cwd: p.dir })).code).toBe(0);
    p.write('b.eval.yaml', p.read('a.eval.yaml'));
    rmSync(p.path('a.eval.yaml'));
    expect((await runCli(['eval', 'run', '-q', '-o', '.proctor/results/head'], { cwd: p.dir })).code).toBe(0);
    const r = await runCli(['results', 'compare', 'base', 'head'], { cwd: p.dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/GATE FAILED: 1 case\(s\) lost/);
    expect(r.stdout).toMatch(/only in base \(1\)\n.*a\.eval\.yaml/);
  });

  it('exits 1 when fewer cases pass than in the base beyond --tolerance, else 0', async () => {
    // t0 goes from failed to error (no regression, nothing lost) while t1 passes in both: same count, exit 0.
    const base: FixtureCase[] = [...passing(4), { test: 'x', outcome: 'failed' }];
    const fewer: FixtureCase[] = [...passing(4), { test: 'x', outcome: 'error' }, { test: 'new', outcome: 'failed' }];
    expect((await compareBundles(base, fewer)).code).toBe(0);
    // Two passing cases fewer (one regressed, one canceled) is a failed gate unless the tolerance allows it.
    const worse: FixtureCase[] = [
      ...passing(2),
      { test: 't2', outcome: 'failed' },
      { test: 't3', outcome: 'canceled' },
      { test: 'x', outcome: 'failed' },
    ];
    const strict = await compareBundles(base, worse);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toMatch(/GATE FAILED: 1 case\(s\) regressed; 1 case\(s\) lost/);
    const json = JSON.parse((await compareBundles(base, worse, '--json')).stdout);
    expect(json.gate).toEqual({
      pass: false,
      tolerance: 0,
      passing: { base: 4, head: 2 },
      lost: 1,
      failures: ['1 case(s) regressed', '1 case(s) lost (canceled or missing in head)', 'passing 4 → 2 (tolerance 0)'],
    });
  });

  it('lets --tolerance absorb a drop in passing cases, but never a regression or a lost case', async () => {
    const base: FixtureCase[] = [...passing(3), { test: 'n', outcome: 'passed' }];
    const head: FixtureCase[] = [...passing(3), { test: 'n', outcome: 'failed' }];
    expect((await compareBundles(base, head, '--tolerance', '1')).code).toBe(1);
    const added: FixtureCase[] = [...passing(3), { test: 'n', outcome: 'passed' }, { test: 'm', outcome: 'failed' }];
    expect((await compareBundles(base, added, '--tolerance', '1')).code).toBe(0);
    expect((await compareBundles(base, head, '--tolerance', '-1')).code).toBe(2);
  });
});
