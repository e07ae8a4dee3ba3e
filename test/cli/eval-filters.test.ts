import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import { bundleResult } from '../support/bundle-result.js';
import { runCli } from '../support/cli.js';
import { onlyBundle, type TempProject, tempProject } from '../support/project.js';

const evalText = `
targets:
  - { label: fast, kind: echo, prefix: "\${ECHO_PREFIX}" }
  - { label: slow, kind: echo }
prompts: ["{{ q }} for {{ who }}"]
tests:
  - { id: greet, description: "greets the user", vars: { q: hello, who: ann }, assert: [{ type: contains, value: hello }] }
  - { id: part, description: "says goodbye", vars: { q: bye, who: bob }, assert: [{ type: contains, value: bye }] }
  - { id: thank, vars: { q: thanks, who: cy }, assert: [{ type: contains, value: thanks }] }
`;

describe('eval run filters', () => {
  let project: TempProject;
  const run = (...args: string[]) => runCli(['eval', 'run', 'a.eval.yaml', '-q', ...args], { cwd: project.dir });
  const ran = () =>
    readIndex(onlyBundle(project))
      .rows.map((r) => `${r.identity.test}@${r.identity.target}`)
      .sort();

  beforeEach(() => {
    project = tempProject({ 'a.eval.yaml': evalText, '.env': 'ECHO_PREFIX=from-env: \n' });
  });
  afterEach(() => project.remove());

  it('--filter-pattern matches a test’s description, else its id', async () => {
    expect((await run('--env-file', '.env', '--filter-pattern', 'good|^tha')).code).toBe(0);
    expect(ran()).toEqual(['part@fast', 'part@slow', 'thank@fast', 'thank@slow']);
  });

  it('--filter-targets keeps the targets whose label matches; --first N the first N tests', async () => {
    expect((await run('--env-file', '.env', '--filter-targets', '^slow$', '--first', '2')).code).toBe(0);
    expect(ran()).toEqual(['greet@slow', 'part@slow']);
  });

  it('--var sets a var in every test, and --env-file feeds the environment references', async () => {
    expect((await run('--env-file', '.env', '--var', 'who=zed', '--filter-targets', 'fast', '--first', '1')).code).toBe(
      0,
    );
    const [row] = readIndex(onlyBundle(project)).rows;
    const result = bundleResult(onlyBundle(project), row ?? {});
    // The prefix came from the env file: a value the run reads through a variable is kept out of the bundle.
    expect(result.output).toBe('[redacted]hello for zed');
    expect(row?.outcome).toBe('passed');
  });

  it('refuses, before running anything, a filter that selects nothing, a bad pattern, a bad --var and a missing env file', async () => {
    for (const [args, says] of [
      [['--env-file', '.env', '--filter-pattern', 'nothing-like-this'], 'selects no test'],
      [['--env-file', '.env', '--filter-targets', 'nope'], 'selects no target'],
      [['--env-file', '.env', '--filter-pattern', '('], 'not a valid regular expression'],
      [['--env-file', '.env', '--var', 'novalue'], 'is not key=value'],
      // `--env-path`: Node 20 itself reads an `--env-file` anywhere on its command line, and exits 9 on a missing one.
      [['--env-path', 'missing.env'], '--env-file missing.env: no such file'],
    ] as const) {
      const result = await run(...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(says);
    }
    expect(project.exists('.proctor/results')).toBe(false);
  });
});
