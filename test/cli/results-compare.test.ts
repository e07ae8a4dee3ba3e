import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';

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
