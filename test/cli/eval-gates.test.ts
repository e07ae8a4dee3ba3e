// Repeats, flakiness and pass-rate gates: `--repeat K` with a per-case pass rule, flaky cases reported with
// their pass fraction, and `--fail-under RATE` overall and per target.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { type TempProject, tempProject } from '../support/project.js';

// An agent that answers "yes" and "no" in turn for each prompt (a counter file per prompt): a flaky model.
const agent = `
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
let prompt = '';
process.stdin.on('data', (d) => (prompt += d));
process.stdin.on('end', () => {
  const file = 'count-' + Buffer.from(prompt).toString('hex').slice(0, 40);
  const n = existsSync(file) ? Number(readFileSync(file, 'utf8')) : 0;
  writeFileSync(file, String(n + 1));
  const steady = prompt.startsWith('steady');
  process.stdout.write(steady || n % 2 === 0 ? 'yes' : 'no');
});
`;

const evalText = `
targets:
  - { label: flip, kind: cli, command: [node, agent.cjs] }
  - { label: sure, kind: echo, prefix: "yes " }
prompts: ["{{ q }}"]
tests:
  - { id: steady, vars: { q: steady }, assert: [{ type: contains, value: "yes" }] }
  - { id: shaky, vars: { q: shaky }, assert: [{ type: contains, value: "yes" }] }
`;

describe('eval run gates', () => {
  let project: TempProject;
  const run = (...args: string[]) => runCli(['eval', 'run', 'a.eval.yaml', '-j', '1', ...args], { cwd: project.dir });

  beforeEach(() => {
    project = tempProject({ 'a.eval.yaml': evalText, 'agent.cjs': agent });
  });
  afterEach(() => project.remove());

  it('--repeat 3 reports the flaky case with its pass fraction; the pass rule decides the exit code', async () => {
    const all = await runCli(['eval', 'run', 'a.eval.yaml', '-j', '1', '--repeat', '3'], {
      cwd: project.dir,
      env: { GITHUB_STEP_SUMMARY: project.path('summary.md') },
    });
    expect(project.read('summary.md')).toMatch(
      /### Flaky \(1\)\n+- a\.eval\.yaml · shaky · p1 · 0 · flip: 2\/3 samples passed/,
    );
    expect(all.code).toBe(1);
    expect(all.stdout).toMatch(/flaky \(1\):\n\s+a\.eval\.yaml · shaky · p1 · flip\s+2\/3 passed/);
    expect(all.stdout).toContain('pass rule all: 3 of 4 case(s) pass');

    expect((await run('--repeat', '3', '--pass-rule', 'any')).code).toBe(0);
    const fraction = await run('--repeat', '3', '--pass-rule', '0.6');
    expect(fraction.code).toBe(0);
    expect(fraction.stdout).toContain('pass rule ≥ 0.6 of samples: 4 of 4 case(s) pass');
    expect((await run('--repeat', '3', '--pass-rule', '0.7')).code).toBe(1);
  });

  it('--fail-under gates on the pass rate, overall and per target', async () => {
    // 3 of 4 cases pass overall (75 %), but flip passes only 1 of 2 (50 %).
    const perTarget = await run('--repeat', '2', '--fail-under', '0.7');
    expect(perTarget.code).toBe(1);
    expect(perTarget.stdout).toContain('below --fail-under 0.7: flip 50.0%');
    expect((await run('--repeat', '2', '--fail-under', '0.5')).code).toBe(0);
  });

  it('refuses a pass rule or a rate it cannot read, before running anything', async () => {
    for (const args of [
      ['--pass-rule', 'most'],
      ['--pass-rule', '1.5'],
      ['--fail-under', '2'],
    ]) {
      const result = await run(...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(args[1]);
    }
    expect(project.exists('.proctor/results')).toBe(false);
  });
});
