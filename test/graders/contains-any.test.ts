import { describe, expect, it } from 'vitest';
import { containsAny } from '../../src/graders/contains-any.js';
import { gradeSync } from './input.js';

const create = (value: string[]) => containsAny.create(containsAny.config().parse({ value }), { baseDir: '/' });

describe('contains-any', () => {
  it('passes on any one of the values and names it', () => {
    const result = gradeSync(create(['cat', 'dog']), 'a dog');
    expect(result).toEqual({ pass: true, score: 1, reason: 'output contains "dog"' });
  });

  it('fails when none is present', () => {
    const result = gradeSync(create(['cat', 'dog']), 'a bird');
    expect(result.pass).toBe(false);
    expect(result.reason).toBe('expected output to contain any of "cat", "dog"');
  });

  it('needs at least one value', () => {
    expect(containsAny.config().safeParse({ value: [] }).success).toBe(false);
  });
});
