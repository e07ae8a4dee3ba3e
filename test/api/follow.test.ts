import { describe, expect, it } from 'vitest';
import { fullReadingDue } from '../../src/api/follow.js';

describe('fullReadingDue', () => {
  it('takes the first full reading at once', () => {
    expect(fullReadingDue(1_000, undefined)).toBe(true);
  });

  it('takes a cheap reading (a small group) at every poll', () => {
    expect(fullReadingDue(1_200, { at: 1_000, costMs: 2 })).toBe(true);
  });

  it('spaces a costly reading (a large group) out to 20 times what it cost', () => {
    const last = { at: 1_000, costMs: 60 };
    expect(fullReadingDue(1_200, last)).toBe(false);
    expect(fullReadingDue(2_199, last)).toBe(false);
    expect(fullReadingDue(2_200, last)).toBe(true);
  });
});
