import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CanceledError, ProctorError } from '../../src/errors.js';
import { cli } from '../../src/targets/cli.js';
import type { Target, TargetInput } from '../../src/targets/target.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'proctor-cli-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const makeTarget = (config: Record<string, unknown>): Target =>
  cli.create(cli.config().parse(config), { baseDir: dir, env: {} });
const signal = (): AbortSignal => new AbortController().signal;
const run = (target: Target, input: Partial<TargetInput> = {}) =>
  target.invoke({ prompt: 'the prompt', vars: {}, ...input }, signal());

const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
};

/** Alive and not a zombie: a container's init may never reap an orphan we killed. */
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('cli target', () => {
  it('pipes the prompt to stdin and returns stdout without its final newline', async () => {
    const out = await run(makeTarget({ command: 'cat; echo' }));
    expect(out.text).toBe('the prompt');
    expect(out.process).toEqual({ stdout: 'the prompt\n', stderr: '', exitCode: 0 });
    expect(out.transcript).toEqual([
      { role: 'user', content: 'the prompt' },
      { role: 'assistant', content: 'the prompt' },
    ]);
    expect(out.usage).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
  });

  it('appends the prompt as one argument, never re-parsed by the shell', async () => {
    const prompt = `it's "$HOME" $(echo injected) ; echo nope`;
    const out = await run(makeTarget({ command: 'printf "[%s]"', prompt_via: 'arg' }), { prompt });
    expect(out.text).toBe(`[${prompt}]`);
  });

  it('appends the prompt to an argv command without a shell', async () => {
    const out = await run(makeTarget({ command: ['printf', '<%s>'], prompt_via: 'arg' }), { prompt: 'a b $X' });
    expect(out.text).toBe('<a b $X>');
  });

  it('writes the prompt to a file, named by {prompt_file} and PROCTOR_PROMPT_FILE', async () => {
    const target = makeTarget({ command: 'cat {prompt_file}; echo; cat "$PROCTOR_PROMPT_FILE"', prompt_via: 'file' });
    const out = await run(target, { prompt: 'from a file' });
    expect(out.text).toBe('from a file\nfrom a file');
    const argv = makeTarget({ command: ['cat', '{prompt_file}'], prompt_via: 'file' });
    expect((await run(argv, { prompt: 'argv file' })).text).toBe('argv file');
  });

  it('removes the prompt file afterwards', async () => {
    const out = await run(makeTarget({ command: 'echo "$PROCTOR_PROMPT_FILE"', prompt_via: 'file' }));
    expect(out.text).toContain('prompt.txt');
    expect(existsSync(out.text)).toBe(false);
  });

  it('runs in the case cwd by default, and in config cwd relative to baseDir when set', async () => {
    const workspace = path.join(dir, 'ws');
    await mkdir(workspace);
    await mkdir(path.join(dir, 'sub'));
    expect((await run(makeTarget({ command: 'pwd' }))).text).toBe(dir);
    expect((await run(makeTarget({ command: 'pwd' }), { cwd: workspace })).text).toBe(workspace);
    expect((await run(makeTarget({ command: 'pwd', cwd: 'sub' }), { cwd: workspace })).text).toBe(
      path.join(dir, 'sub'),
    );
  });

  it('passes env and PROCTOR_VARS', async () => {
    const target = makeTarget({ command: 'echo "$GREETING"; echo "$PROCTOR_VARS"', env: { GREETING: 'hi' } });
    const out = await run(target, { vars: { lang: 'fr', n: 2 } });
    const [greeting, vars] = out.text.split('\n');
    expect(greeting).toBe('hi');
    expect(JSON.parse(vars ?? '')).toEqual({ lang: 'fr', n: 2 });
  });

  it('passes vars too large for the environment in the file PROCTOR_VARS_FILE names, removed afterwards', async () => {
    const target = makeTarget({
      command: 'printenv PROCTOR_VARS || echo unset; echo "$PROCTOR_VARS_FILE"; cat "$PROCTOR_VARS_FILE"',
    });
    const vars = { big: 'x'.repeat(200 * 1024) };
    const [inEnv, file, json] = (await run(target, { vars })).text.split('\n');
    expect(inEnv).toBe('unset');
    expect(JSON.parse(json ?? '')).toEqual(vars);
    expect(existsSync(file ?? '')).toBe(false);
  });

  it('reads the answer from output_file relative to cwd, ignoring a stale one', async () => {
    await writeFile(path.join(dir, 'answer.txt'), 'stale');
    const target = makeTarget({ command: 'cat > answer.txt; echo progress', output_file: 'answer.txt' });
    const out = await run(target, { prompt: 'fresh' });
    expect(out.text).toBe('fresh');
    expect(out.process?.stdout).toBe('progress\n');
    expect(await readFile(path.join(dir, 'answer.txt'), 'utf8')).toBe('fresh');
  });

  it('calls a missing output_file malformed_output', async () => {
    await writeFile(path.join(dir, 'answer.txt'), 'stale');
    const error = await rejection(run(makeTarget({ command: 'true', output_file: 'answer.txt' })));
    expect(error).toBeInstanceOf(ProctorError);
    expect((error as ProctorError).kind).toBe('malformed_output');
  });

  it('turns a non-zero exit into target_crash with the stderr tail', async () => {
    const error = await rejection(run(makeTarget({ command: 'echo partial; echo boom >&2; exit 3' })));
    expect(error).toBeInstanceOf(ProctorError);
    const crash = error as ProctorError;
    expect(crash.kind).toBe('target_crash');
    expect(crash.message).toContain('exited with code 3');
    expect(crash.message).toContain('boom');
    expect(crash.detail.cause).toMatchObject({ exitCode: 3, stdout: 'partial\n', stderr: 'boom\n' });
  });

  it('turns death by signal into target_crash', async () => {
    const error = await rejection(run(makeTarget({ command: 'kill -9 $$' })));
    expect((error as ProctorError).kind).toBe('target_crash');
    expect((error as ProctorError).message).toContain('SIGKILL');
  });

  it('turns a missing program into target_crash', async () => {
    const error = await rejection(run(makeTarget({ command: ['/nonexistent/agent'] })));
    expect((error as ProctorError).kind).toBe('target_crash');
  });

  it('times out after timeout_s and kills the command', async () => {
    const started = Date.now();
    const error = await rejection(run(makeTarget({ command: 'sleep 20 & echo $! > child.pid; wait', timeout_s: 0.3 })));
    expect((error as ProctorError).kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(3000);
    const child = Number(await readFile(path.join(dir, 'child.pid'), 'utf8'));
    await expect.poll(() => isAlive(child)).toBe(false);
  });

  it('kills the whole process tree when the signal aborts, and throws CanceledError', async () => {
    const controller = new AbortController();
    const target = makeTarget({ command: 'sleep 20 & echo $! > child.pid; wait' });
    const call = target.invoke({ prompt: '', vars: {} }, controller.signal);
    const pidFile = path.join(dir, 'child.pid');
    await expect.poll(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '').toBe(true);
    const child = Number(readFileSync(pidFile, 'utf8'));
    expect(isAlive(child)).toBe(true);
    const aborted = Date.now();
    controller.abort();
    expect(await rejection(call)).toBeInstanceOf(CanceledError);
    expect(Date.now() - aborted).toBeLessThan(2000);
    await expect.poll(() => isAlive(child)).toBe(false);
  });

  it('kills a command that ignores SIGTERM after the grace period', async () => {
    const controller = new AbortController();
    const target = makeTarget({
      command: `trap '' TERM; echo ready > ready; while :; do sleep 0.05; done`,
      kill_grace_s: 0.2,
    });
    const call = target.invoke({ prompt: '', vars: {} }, controller.signal);
    await expect.poll(() => existsSync(path.join(dir, 'ready'))).toBe(true);
    const aborted = Date.now();
    controller.abort();
    expect(await rejection(call)).toBeInstanceOf(CanceledError);
    expect(Date.now() - aborted).toBeLessThan(2000);
  });

  it('does not start when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const call = makeTarget({ command: 'touch started' }).invoke({ prompt: '', vars: {} }, controller.signal);
    expect(await rejection(call)).toBeInstanceOf(CanceledError);
    expect(existsSync(path.join(dir, 'started'))).toBe(false);
  });
});
