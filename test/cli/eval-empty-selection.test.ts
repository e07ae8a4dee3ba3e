import { describe, expect, it } from 'vitest';
import type { Summary } from '../../src/bundle/summary.js';
import { runCli } from '../support/cli.js';
import { type TempProject, tempProject } from '../support/project.js';

const evalText = (tests: { id: string; expect: string }[]) => `targets: [{ kind: echo }]
prompts: ["{{ word }}"]
tests:
${tests.map((t) => `  - { id: ${t.id}, vars: { word: apple }, assert: [{ type: equals, value: ${t.expect} }] }`).join('\n')}
`;

const run = (p: TempProject, ...args: string[]) => runCli(['eval', 'run', ...args], { cwd: p.dir });

/** An empty selection: says so, exits 0, runs nothing, and leaves a bundle that `results show` reads. */
const expectNothingRun = async (p: TempProject, args: string[], bundle: string, total: number): Promise<void> => {
  const result = await run(p, ...args);
  expect(result.stderr).toMatch(/nothing to run/);
  expect(result.stderr).not.toMatch(/internal error/);
  expect(result.code, result.stderr).toBe(0);
  const show = await runCli(['results', 'show', bundle, '--json'], { cwd: p.dir });
  expect(show.code, show.stderr).toBe(0);
  expect((JSON.parse(show.stdout) as Summary).counts.total).toBe(total);
};

describe('nothing left to run', () => {
  it('--resume of a finished bundle: in place it is unchanged; with -o the new bundle is valid and empty', async () => {
    const p = tempProject({
      'a.eval.yaml': evalText([
        { id: 'good', expect: 'apple' },
        { id: 'bad', expect: 'pear' },
      ]),
    });
    expect((await run(p, '-q', '-o', 'out')).code).toBe(1);
    const index = p.read('out/index.jsonl');
    await expectNothingRun(p, ['--resume', 'out'], 'out', 2);
    expect(p.read('out/index.jsonl')).toBe(index);
    await expectNothingRun(p, ['--resume', 'out', '-o', 'fresh'], 'fresh', 0);
    expect(p.read('fresh/index.jsonl')).toBe('');
    expect(p.read('out/index.jsonl')).toBe(index);
  });

  it('--rerun-failed of a bundle with no failure, in place and with -o', async () => {
    const p = tempProject({ 'a.eval.yaml': evalText([{ id: 'good', expect: 'apple' }]) });
    expect((await run(p, '-q', '-o', 'out')).code).toBe(0);
    const index = p.read('out/index.jsonl');
    await expectNothingRun(p, ['--rerun-failed', 'out'], 'out', 1);
    expect(p.read('out/index.jsonl')).toBe(index);
    await expectNothingRun(p, ['--rerun-failed', 'out', '-o', 'again'], 'again', 0);
    expect(p.read('again/index.jsonl')).toBe('');
  });
});
