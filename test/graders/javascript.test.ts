import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProctorError } from '../../src/errors.js';
import type { GradeInput } from '../../src/graders/grader.js';
import { javascript } from '../../src/graders/javascript.js';
import { anInput, gradeSync, neverAborted } from './input.js';

const baseDir = mkdtempSync(path.join(tmpdir(), 'proctor-js-grader-'));
const create = (value: string) => javascript.create(javascript.config.parse({ value }), { baseDir });

const writeModule = (name: string, source: string): string => {
  writeFileSync(path.join(baseDir, name), source);
  return `file://${name}`;
};

const gradeAsync = async (value: string, input: GradeInput) => create(value)(input, neverAborted);

describe('javascript expression', () => {
  it('sees output, vars and context; a boolean scores 1 or 0', () => {
    const grade = create("output.length < 10 && vars.name === 'x' && context.target === 'echo'");
    expect(grade(anInput('short', { vars: { name: 'x' } }), neverAborted)).toMatchObject({ pass: true, score: 1 });
    expect(grade(anInput('short', { vars: { name: 'y' } }), neverAborted)).toMatchObject({ pass: false, score: 0 });
    expect(gradeSync(grade, 'far too long an output').reason).toContain('returned false');
  });

  it('passes a number only at 1 (the assertion threshold can lower that)', () => {
    expect(gradeSync(create('0.5'), '')).toMatchObject({ pass: false, score: 0.5 });
    expect(gradeSync(create('1'), '')).toMatchObject({ pass: true, score: 1 });
    expect(gradeSync(create('7'), '')).toMatchObject({ pass: true, score: 1 });
  });

  it('uses a returned {pass, score, reason} as is, filling what is left out', () => {
    expect(gradeSync(create("({ pass: true, score: 0.8, reason: 'close' })"), '')).toEqual({
      pass: true,
      score: 0.8,
      reason: 'close',
    });
    expect(gradeSync(create('({ pass: false })'), '')).toMatchObject({ pass: false, score: 0 });
    expect(gradeSync(create('({ score: 1 })'), '')).toMatchObject({ pass: true, score: 1 });
  });

  it('accepts a body with statements', () => {
    const grade = create('const words = output.split(" ");\nreturn words.length === 2;');
    expect(gradeSync(grade, 'two words').pass).toBe(true);
    expect(gradeSync(grade, 'three words here').pass).toBe(false);
  });

  it('compiles once: the function is reused across calls', () => {
    const grade = create('(globalThis.__proctorCalls = (globalThis.__proctorCalls ?? 0) + 1) > 0');
    for (let i = 0; i < 3; i++) expect(gradeSync(grade, '').pass).toBe(true);
  });

  it('throws grader_error when the expression throws or returns something unusable', () => {
    expect(() => gradeSync(create('output.nope.deeper'), 'x')).toThrowError(
      expect.objectContaining({ kind: 'grader_error', message: expect.stringContaining('threw') }),
    );
    expect(() => gradeSync(create('undefined'), 'x')).toThrowError(ProctorError);
    expect(() => gradeSync(create("'yes'"), 'x')).toThrowError(/expected a boolean, a number/);
  });

  it('resolves a returned promise', async () => {
    await expect(gradeAsync('Promise.resolve(output === "ok")', anInput('ok'))).resolves.toMatchObject({ pass: true });
    await expect(gradeAsync('Promise.reject(new Error("boom"))', anInput('ok'))).rejects.toMatchObject({
      kind: 'grader_error',
    });
  });

  it('rejects a syntax error at validation', () => {
    const parsed = javascript.config.safeParse({ value: 'output.length <' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain('invalid JavaScript');
  });
});

describe('javascript file://', () => {
  it('calls the default export with (output, context)', async () => {
    const ref = writeModule('default.mjs', 'export default (output, context) => output === context.vars.expected;');
    const grade = create(ref);
    const input = anInput('yes', { vars: { expected: 'yes' } });
    await expect(grade(input, neverAborted)).resolves.toMatchObject({ pass: true, score: 1 });
    // Once loaded, a synchronous function grades without a promise.
    const again = grade(anInput('no', { vars: { expected: 'yes' } }), neverAborted);
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toMatchObject({ pass: false, score: 0 });
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
