import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CanceledError, ProctorError } from '../../src/errors.js';
import type { GradeInput, GradeResult } from '../../src/graders/grader.js';
import { javascript } from '../../src/graders/javascript.js';
import { anInput, neverAborted } from './input.js';

const baseDir = mkdtempSync(path.join(tmpdir(), 'proctor-js-grader-'));
const create = (value: string, timeoutS?: number) =>
  javascript.create(javascript.config().parse({ value, ...(timeoutS ? { timeout_s: timeoutS } : {}) }), { baseDir });

/** User code runs in a worker thread, so every grade is a promise. */
const grade = (value: string, output: string): Promise<GradeResult> =>
  Promise.resolve(create(value)(anInput(output), neverAborted));

const writeModule = (name: string, source: string): string => {
  writeFileSync(path.join(baseDir, name), source);
  return `file://${name}`;
};

const gradeAsync = async (value: string, input: GradeInput) => create(value)(input, neverAborted);

describe('javascript expression', () => {
  it('sees output, vars and context; a boolean scores 1 or 0', async () => {
    const check = create("output.length < 10 && vars.name === 'x' && context.target === 'echo'");
    await expect(check(anInput('short', { vars: { name: 'x' } }), neverAborted)).resolves.toMatchObject({
      pass: true,
      score: 1,
    });
    await expect(check(anInput('short', { vars: { name: 'y' } }), neverAborted)).resolves.toMatchObject({
      pass: false,
      score: 0,
    });
    expect((await check(anInput('far too long an output'), neverAborted)).reason).toContain('returned false');
  });

  it('passes a number only at 1 (the assertion threshold can lower that)', async () => {
    await expect(grade('0.5', '')).resolves.toMatchObject({ pass: false, score: 0.5 });
    await expect(grade('1', '')).resolves.toMatchObject({ pass: true, score: 1 });
    await expect(grade('7', '')).resolves.toMatchObject({ pass: true, score: 1 });
  });

  it('uses a returned {pass, score, reason} as is, filling what is left out', async () => {
    await expect(grade("({ pass: true, score: 0.8, reason: 'close' })", '')).resolves.toEqual({
      pass: true,
      score: 0.8,
      reason: 'close',
    });
    await expect(grade('({ pass: false })', '')).resolves.toMatchObject({ pass: false, score: 0 });
    await expect(grade('({ score: 1 })', '')).resolves.toMatchObject({ pass: true, score: 1 });
  });

  it('accepts a body with statements', async () => {
    const body = 'const words = output.split(" ");\nreturn words.length === 2;';
    expect((await grade(body, 'two words')).pass).toBe(true);
    expect((await grade(body, 'three words here')).pass).toBe(false);
  });

  it('compiles once: the function is reused across calls', async () => {
    const check = create('(globalThis.__proctorCalls = (globalThis.__proctorCalls ?? 0) + 1)');
    const scores = [];
    // One after the other, so the same idle worker (and its compiled function) serves every call.
    for (let i = 0; i < 3; i++) scores.push((await check(anInput(''), neverAborted)).reason);
    expect(scores).toEqual([1, 2, 3].map((n) => expect.stringContaining(`score of ${n}`)));
  });

  it('throws grader_error when the expression throws or returns something unusable', async () => {
    await expect(grade('output.nope.deeper', 'x')).rejects.toMatchObject({
      kind: 'grader_error',
      message: expect.stringContaining('threw'),
    });
    await expect(grade('undefined', 'x')).rejects.toBeInstanceOf(ProctorError);
    await expect(grade("'yes'", 'x')).rejects.toThrowError(/expected a boolean, a number/);
    await expect(grade('() => true', 'x')).rejects.toMatchObject({
      kind: 'grader_error',
      message: expect.stringContaining('cannot be read'),
    });
  });

  it('resolves a returned promise', async () => {
    await expect(gradeAsync('Promise.resolve(output === "ok")', anInput('ok'))).resolves.toMatchObject({ pass: true });
    await expect(gradeAsync('Promise.reject(new Error("boom"))', anInput('ok'))).rejects.toMatchObject({
      kind: 'grader_error',
    });
  });

  it('rejects a syntax error at validation', () => {
    const parsed = javascript.config().safeParse({ value: 'output.length <' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain('invalid JavaScript');
  });
});

describe('javascript file://', () => {
  it('calls the default export with (output, context)', async () => {
    const ref = writeModule('default.mjs', 'export default (output, context) => output === context.vars.expected;');
    const check = create(ref);
    const input = anInput('yes', { vars: { expected: 'yes' } });
    await expect(check(input, neverAborted)).resolves.toMatchObject({ pass: true, score: 1 });
    const again = check(anInput('no', { vars: { expected: 'yes' } }), neverAborted);
    await expect(again).resolves.toMatchObject({ pass: false, score: 0 });
  });

  it('uses a `grade` export, possibly async, and its verdict object', async () => {
    const ref = writeModule(
      'named.mjs',
      'export async function grade(output) { return { pass: output.includes("a"), score: 0.25, reason: "custom" }; }',
    );
    await expect(gradeAsync(ref, anInput('abc'))).resolves.toEqual({ pass: true, score: 0.25, reason: 'custom' });
  });

  it('loads CommonJS', async () => {
    const ref = writeModule('common.cjs', 'module.exports = (output) => output.length;');
    await expect(gradeAsync(ref, anInput('x'))).resolves.toMatchObject({ pass: true, score: 1 });
  });

  it('throws grader_error for a missing file at create', () => {
    expect(() => create('file://missing.mjs')).toThrowError(expect.objectContaining({ kind: 'grader_error' }));
  });

  it('throws grader_error when the module fails to load, throws, or exports no function', async () => {
    const broken = writeModule('broken.mjs', 'throw new Error("load failure");');
    await expect(gradeAsync(broken, anInput('x'))).rejects.toMatchObject({ kind: 'grader_error' });
    const throwing = writeModule('throwing.mjs', 'export default () => { throw new Error("inside"); };');
    await expect(gradeAsync(throwing, anInput('x'))).rejects.toMatchObject({
      kind: 'grader_error',
      message: expect.stringContaining('inside'),
    });
    const empty = writeModule('empty.mjs', 'export const answer = 42;');
    await expect(gradeAsync(empty, anInput('x'))).rejects.toMatchObject({
      kind: 'grader_error',
      message: expect.stringContaining('no default or `grade` function'),
    });
  });
});

/** A signal aborted the way the engine's deadline aborts it: with a `timeout` ProctorError as its reason. */
const deadlineAfter = (ms: number): AbortSignal => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new ProctorError('timeout', 'the task exceeded its timeout_s (1s)')), ms);
  return controller.signal;
};

describe('javascript code that never returns', () => {
  it('is ended at its own timeout_s as a grader_error, and the next grade still runs', async () => {
    await expect(create('while (true) {}', 0.3)(anInput('x'), neverAborted)).rejects.toMatchObject({
      kind: 'grader_error',
      message: expect.stringContaining('did not finish within 0.3s'),
    });
    await expect(create('new Promise(() => {})', 0.3)(anInput('x'), neverAborted)).rejects.toMatchObject({
      kind: 'grader_error',
    });
    await expect(grade('output === "x"', 'x')).resolves.toMatchObject({ pass: true });
  });

  it('in a module, at load or in its function, is ended by the case deadline as a grader_error', async () => {
    const atLoad = writeModule('loops-at-load.mjs', 'while (true) {}\nexport default () => true;');
    const inside = writeModule('loops-inside.mjs', 'export default async () => { await null; for (;;) {} };');
    for (const ref of [atLoad, inside]) {
      await expect(create(ref)(anInput('x'), deadlineAfter(300))).rejects.toMatchObject({
        kind: 'grader_error',
        message: expect.stringContaining('was still running when the task exceeded its timeout_s'),
      });
    }
  });

  it('is canceled by an abort that is not a deadline', async () => {
    const controller = new AbortController();
    const pending = create('while (true) {}')(anInput('x'), controller.signal);
    setTimeout(() => controller.abort(), 200);
    await expect(pending).rejects.toBeInstanceOf(CanceledError);
  });

  it('leaves other grades running beside it alone', async () => {
    const looping = expect(create('while (true) {}', 1)(anInput('x'), neverAborted)).rejects.toMatchObject({
      kind: 'grader_error',
    });
    const fine = await Promise.all(Array.from({ length: 4 }, (_, i) => grade(`output === "${i}"`, String(i))));
    expect(fine.map((r) => r.pass)).toEqual([true, true, true, true]);
    await looping;
  });

  it('a worker that crashes after answering fails nothing else', async () => {
    const crashing = writeModule(
      'crashes-later.mjs',
      'export default () => { setTimeout(() => { throw new Error("late"); }, 10); return true; };',
    );
    await expect(create(crashing)(anInput('x'), neverAborted)).resolves.toMatchObject({ pass: true });
    await new Promise((r) => setTimeout(r, 100));
    await expect(grade('output === "y"', 'y')).resolves.toMatchObject({ pass: true });
  });
});
