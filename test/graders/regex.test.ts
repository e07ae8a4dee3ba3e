import { describe, expect, it } from 'vitest';
import { regex } from '../../src/graders/regex.js';
import { gradeSync } from './input.js';

const create = (config: unknown) => regex.create(regex.config().parse(config), { baseDir: '/' });

describe('regex', () => {
  it('passes on a match and fails otherwise', () => {
    const grade = create({ value: '^\\d{3}-\\d{4}$' });
    expect(gradeSync(grade, '555-1234')).toEqual({ pass: true, score: 1, reason: 'output matches /^\\d{3}-\\d{4}$/' });
    expect(gradeSync(grade, 'call 555-1234')).toEqual({
      pass: false,
      score: 0,
      reason: 'expected output to match /^\\d{3}-\\d{4}$/',
    });
  });

  it('honours flags', () => {
    expect(gradeSync(create({ value: 'hello', flags: 'i' }), 'HELLO').pass).toBe(true);
    expect(gradeSync(create({ value: 'hello' }), 'HELLO').pass).toBe(false);
  });

  it('gives the same answer every call even with the g flag', () => {
    const grade = create({ value: 'a', flags: 'g' });
    expect([1, 2, 3].map(() => gradeSync(grade, 'a').pass)).toEqual([true, true, true]);
  });

  it('rejects an invalid pattern or flag at validation', () => {
    const bad = regex.config().safeParse({ value: '(' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['value']);
    expect(regex.config().safeParse({ value: 'a', flags: 'q' }).success).toBe(false);
  });
});
