import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CanceledError, ProctorError } from '../../src/errors.js';
import type { GradeInput } from '../../src/graders/grader.js';
import { script } from '../../src/graders/script.js';
import { anInput, neverAborted } from './input.js';

const baseDir = mkdtempSync(path.join(tmpdir(), 'proctor-script-grader-'));
const create = (config: Record<string, unknown>) => script.create(script.config().parse(config), { baseDir });
const run = (command: string, input: GradeInput = anInput('hello'), signal = neverAborted) =>
  create({ value: command })(input, signal);

describe('script', () => {
  it('passes by exit code 0 and fails by a non-zero exit with the stderr tail', async () => {
    await expect(run('grep -q hello')).resolves.toEqual({ pass: true, score: 1, reason: 'script exited 0' });
    await expect(run('echo "missing greeting" >&2; exit 3', anInput('bye'))).resolves.toEqual({
      pass: false,
      score: 0,
      reason: 'script exited with code 3: missing greeting',
    });
  });

  it('reads a JSON verdict on stdout, which wins over the exit code', async () => {
    await expect(run(`echo '{"pass": true, "score": 0.75, "reason": "mostly"}'; exit 1`)).resolves.toEqual({
      pass: true,
      score: 0.75,
      reason: 'mostly',
    });
    await expect(run(`echo 'checking…'; echo '{"pass": false, "reason": "nope"}'`)).resolves.toEqual({
      pass: false,
      score: 0,
      reason: 'nope',
    });
  });

  it('treats stdout that is not a verdict as logging', async () => {
    await expect(run(`echo '{"other": 1}'`)).resolves.toMatchObject({ pass: true });
  });

  it('gets the case as snake_case JSON on stdin, in the workspace when there is one', async () => {
    const workspace = mkdtempSync(path.join(tmpdir(), 'proctor-script-ws-'));
    const input = anInput('out', { vars: { userName: 'Ada' }, cwd: workspace });
    await run('cat > stdin.json', input);
    expect(JSON.parse(readFileSync(path.join(workspace, 'stdin.json'), 'utf8'))).toEqual({
      output: 'out',
      prompt: 'Say hello',
      vars: { userName: 'Ada' },
      test: 't1',
      target: 'echo',
      usage: { input_tokens: 3, output_tokens: 5, cost_usd: 0.001 },
      duration_ms: 12,
    });
  });

  it('runs in the eval directory without a workspace, and accepts `command`', async () => {
    writeFileSync(path.join(baseDir, 'check.sh'), 'grep -q \'"output":"hello"\'\n');
    const grade = create({ command: 'sh check.sh' });
    await expect(grade(anInput('hello'), neverAborted)).resolves.toMatchObject({ pass: true });
    await expect(grade(anInput('bye'), neverAborted)).resolves.toMatchObject({ pass: false });
  });

  it('throws grader_error when the script cannot run or crashes', async () => {
    await expect(run('no-such-command-proctor')).rejects.toMatchObject({ kind: 'grader_error' });
    await expect(run('kill -SEGV $$')).rejects.toMatchObject({
      kind: 'grader_error',
      message: expect.stringContaining('SIGSEGV'),
    });
    await expect(run(`echo '{"pass": "yes"}'`)).rejects.toMatchObject({ kind: 'grader_error' });
  });

  it('throws grader_error on timeout, killing the children too', async () => {
    const grade = create({ value: 'sleep 30; echo late', timeout_s: 0.3 });
    const started = Date.now();
    await expect(grade(anInput('x'), neverAborted)).rejects.toMatchObject({
      kind: 'grader_error',
      message: expect.stringContaining('timed out after 0.3s'),
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('kills a script that ignores SIGTERM after a grace period', async () => {
    const grade = create({ value: "trap '' TERM; sleep 30", timeout_s: 0.2 });
    const started = Date.now();
    await expect(grade(anInput('x'), neverAborted)).rejects.toMatchObject({ kind: 'grader_error' });
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('stops on abort with a CanceledError', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = run('sleep 30; echo late', anInput('x'), controller.signal);
    setTimeout(() => controller.abort(), 200);
    await expect(pending).rejects.toBeInstanceOf(CanceledError);
    expect(Date.now() - started).toBeLessThan(5000);
    await expect(run('exit 0', anInput('x'), AbortSignal.abort())).rejects.toBeInstanceOf(CanceledError);
  });

  it('is a grader_error when a deadline (a timeout reason, not a cancel) stops it', async () => {
    const controller = new AbortController();
    const pending = run('sleep 30; echo late', anInput('x'), controller.signal);
    setTimeout(() => controller.abort(new ProctorError('timeout', 'the task exceeded its timeout_s (1s)')), 200);
    await expect(pending).rejects.toMatchObject({
      kind: 'grader_error',
      message: 'script was still running when the task exceeded its timeout_s (1s)',
    });
  });

  it('needs exactly one of value or command, and a positive timeout', () => {
    expect(script.config().safeParse({}).success).toBe(false);
    expect(script.config().safeParse({ value: 'a', command: 'b' }).success).toBe(false);
    expect(script.config().safeParse({ value: 'a', timeout_s: 0 }).success).toBe(false);
    expect(script.config().parse({ value: 'a' })).toEqual({ value: 'a', timeout_s: 60 });
  });
});
