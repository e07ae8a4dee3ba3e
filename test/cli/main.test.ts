import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { failureReport } from '../../src/cli/main.js';
import { InputError } from '../../src/errors.js';
import { StoreLostError } from '../../src/store/reconnect.js';
import { cliPath, runCli } from '../support/cli.js';
import { onlyBundle, type TempProject, tempProject } from '../support/project.js';

let project: TempProject | undefined;
afterEach(() => project?.remove());

/** A bundle of `n` passed cases, written as `eval run` writes its index. */
const bundleIndex = (n: number): string =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      schema: 'proctor.case/1',
      identity: { eval: 'a.eval.yaml', test: `t${i}`, prompt: 'p1', target: 'echo', sample: 0 },
      key: `k${String(i).padStart(19, '0')}`,
      fingerprint: 'f0000000000000000000',
      outcome: 'passed',
      score: 1,
      error: null,
      attempts: 1,
      duration_ms: 1,
      usage: { input_tokens: 0, output_tokens: 0, cost_usd: 0 },
      run_id: `r.${i}`,
      group_id: 'r',
      started_at: '2026-01-01T00:00:00.000Z',
      finished_at: '2026-01-01T00:00:00.001Z',
      artifacts: `cases/k${i}/1`,
    }),
  ).join('\n');

/** Runs `proctor ARGS | head -1` in a shell; resolves to the CLI's own exit code and stderr. */
const pipedToHead = (args: readonly string[], cwd: string): Promise<{ code: number; stderr: string; head: string }> =>
  new Promise((resolve, reject) => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's ${PIPESTATUS[0]}, not JavaScript's
    const script = '"$@" 2>cli.err | head -1; echo "${PIPESTATUS[0]}" >cli.code';
    const shell = spawn('bash', ['-c', script, 'bash', process.execPath, cliPath, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let head = '';
    shell.stdout.on('data', (d: Buffer) => {
      head += d.toString();
    });
    shell.on('error', reject);
    shell.on('close', () => {
      const read = (rel: string): string => (project as TempProject).read(rel);
      resolve({ code: Number(read('cli.code').trim()), stderr: read('cli.err'), head });
    });
  });

describe('the CLI at its edges', () => {
  it('`results show RUN | head -1` exits quietly: a reader that stops early is not an error', async () => {
    // Far more than a pipe holds, so the CLI is still writing when `head` goes away.
    project = tempProject({ 'out/index.jsonl': bundleIndex(3000) });
    const run = await pipedToHead(['results', 'show', 'out'], project.dir);
    expect(run.head).toMatch(/^bundle: .*out\n$/);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  // bin/proctor.js ends a command without Node's teardown, which would close a SQLite handle left open (checkpointing
  // its WAL into the file); so every command must close its store itself, and a user can copy proctor.db alone.
  it('ends each command with its SQLite store in one file, whatever the exit code', async () => {
    project = tempProject({
      'a.eval.yaml':
        'targets: [{kind: echo}]\nprompts: ["hi {{ n }}"]\ntests:\n  - vars: {n: 1}\n    assert: [{type: contains, value: "hi 1"}]\n  - vars: {n: 2}\n    assert: [{type: contains, value: nope}]\n',
    });
    const cwd = project.dir;
    const leftBeside = (): string[] =>
      readdirSync(join(cwd, '.proctor')).filter((name) => name.startsWith('proctor.db-'));
    expect((await runCli(['eval', 'run', '-q'], { cwd })).code).toBe(1);
    expect(leftBeside()).toEqual([]);
    const run = basename(onlyBundle(project));
    // Reads, a run that appends to another's bundle, and input refused once the store is open.
    for (const [args, code] of [
      [['runs', 'list'], 0],
      [['results', 'show', run], 0],
      [['eval', 'run', '-q', '--rerun-failed', run], 1],
      [['runs', 'show', 'no-such-run'], 2],
    ] as const) {
      expect((await runCli(args, { cwd })).code).toBe(code);
      expect(leftBeside()).toEqual([]);
    }
  });

  it('reports an unexpected error as a bug: the stack, then how to report it, exit 1', () => {
    const report = failureReport(new TypeError('cannot read properties of undefined'));
    expect(report.code).toBe(1);
    const lines = report.text.trimEnd().split('\n');
    expect(lines[0]).toBe('internal error: TypeError: cannot read properties of undefined');
    expect(lines[1]).toMatch(/^\s+at /);
    expect(lines.at(-1)).toMatch(/^this is a bug in Proctor \d+\.\d+\.\d+, not in your input: please report it .+/);
    expect(lines.at(-1)).toContain('with the command you ran and this output');
  });

  it('reports bad input without a stack or a bug report, exit 2', () => {
    const report = failureReport(new InputError('no run "x"', undefined, 'see `proctor runs list`'));
    expect(report).toEqual({ code: 2, text: 'error: no run "x"\n  fix: see `proctor runs list`\n' });
  });

  it('reports a store that stayed out of reach as a failed run with what to do next, not as a bug', () => {
    const report = failureReport(new StoreLostError(new Error('connect ECONNREFUSED 127.0.0.1:5432')));
    expect(report.code).toBe(1);
    expect(report.text).toMatch(
      /^error: lost the connection to the store .*: connect ECONNREFUSED 127\.0\.0\.1:5432\n/,
    );
    expect(report.text).toContain('proctor runs gc');
    expect(report.text).not.toContain('internal error');
  });
});
