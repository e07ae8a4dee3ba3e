import { describe, expect, it } from 'vitest';
import { latency } from '../../src/graders/latency.js';
import { anInput, neverAborted } from './input.js';

const grade = (value: number, durationMs: number) =>
  latency.create(latency.config().parse({ value }), { baseDir: '/' })(anInput('x', { durationMs }), neverAborted);

describe('latency', () => {
  it("passes when the target's call took at most the limit, and fails above it, naming both", () => {
    expect(grade(500, 500)).toMatchObject({ pass: true, score: 1 });
    expect(grade(500, 812.4)).toEqual({ pass: false, score: 0, reason: 'took 812 ms > 500 ms' });
  });

  it('refuses a limit that is not positive', () => {
    expect(latency.config().safeParse({ value: 0 }).success).toBe(false);
  });
});
