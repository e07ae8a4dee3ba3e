import { describe, expect, it } from 'vitest';
import { containsAll } from '../../src/graders/contains-all.js';
import { gradeSync } from './input.js';

const create = (value: string[]) => containsAll.create(containsAll.config().parse({ value }), { baseDir: '/' });

describe('contains-all', () => {
  it('passes when every value is present', () => {
    expect(gradeSync(create(['a', 'b']), 'b then a')).toMatchObject({ pass: true, score: 1 });
  });

  it('fails with the share found as score and the missing values as reason', () => {
    const result = gradeSync(create(['red', 'green', 'blue']), 'red only');
    expect(result.pass).toBe(false);
    expect(result.score).toBeCloseTo(1 / 3);
    expect(result.reason).toBe('expected output to contain "green", "blue" (2 of 3 missing)');
  });
});
