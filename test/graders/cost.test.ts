import { describe, expect, it } from 'vitest';
import { cost } from '../../src/graders/cost.js';
import { proctorError } from '../support/rejection.js';
import { anInput, neverAborted } from './input.js';

const grade = (value: number, costUsd: number | null) =>
  cost.create(cost.config().parse({ value }), { baseDir: '/' })(
    anInput('x', { usage: { inputTokens: 1, outputTokens: 1, costUsd } }),
    neverAborted,
  );

describe('cost', () => {
  it('passes at or under the limit and fails above it, naming both', () => {
    expect(grade(0.002, 0.002)).toMatchObject({ pass: true, score: 1 });
    expect(grade(0.001, 0.0015)).toEqual({ pass: false, score: 0, reason: 'cost $0.001500 > $0.001' });
  });

  it('cannot grade an unknown cost: a grader_error naming the fix, never a pass', async () => {
    const error = await proctorError((async () => grade(1, null))());
    expect(error.kind).toBe('grader_error');
    expect(error.message).toContain('[pricing."MODEL"]');
  });

  it('refuses a negative limit', () => {
    expect(cost.config().safeParse({ value: -1 }).success).toBe(false);
  });
});
