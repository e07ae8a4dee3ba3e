import { describe, expect, it } from 'vitest';
import { contains } from '../../src/graders/contains.js';
import { gradeSync } from './input.js';

const create = (value: unknown) => contains.create(contains.config().parse({ value }), { baseDir: '/' });

describe('contains', () => {
  it('passes when the output contains the value', () => {
    expect(gradeSync(create('foo'), 'a foo b')).toEqual({ pass: true, score: 1, reason: 'output contains "foo"' });
  });

  it('fails with a reason naming the value', () => {
    expect(gradeSync(create('foo'), 'a FOO b')).toEqual({
      pass: false,
      score: 0,
      reason: 'expected output to contain "foo"',
    });
  });

  it('accepts a number as YAML reads it', () => {
    expect(gradeSync(create(42), 'answer: 42').pass).toBe(true);
  });

  it('rejects an empty value and unknown keys', () => {
    expect(contains.config().safeParse({ value: '' }).success).toBe(false);
    expect(contains.config().safeParse({ value: 'x', valeu: 'y' }).success).toBe(false);
  });
});
