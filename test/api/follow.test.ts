import { describe, expect, it } from 'vitest';
import { fullReadingDue, readingWaitMs } from '../../src/api/follow.js';
import { RefillPace } from '../../src/api/refill-pace.js';

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

describe('readingWaitMs', () => {
  it('reads every interval while a display wants progress', () => {
    const pace = new RefillPace();
    expect(readingWaitMs(200, true, pace, 0, 2000, 0)).toBe(200);
    expect(readingWaitMs(200, true, pace, 10, 2000, 200)).toBe(200);
  });

  it('unwatched, waits about half what the rest takes at the pace seen, within the interval and 1 s', () => {
    const pace = new RefillPace();
    expect(readingWaitMs(200, false, pace, 0, 2000, 0)).toBe(200);
    // 50 runs a second (one worker of 10 slots on 200 ms calls): 1,990 left take 40 s.
    expect(readingWaitMs(200, false, pace, 10, 2000, 200)).toBe(1000);
    // 60 left take 1.2 s at that pace: the end is near.
    expect(readingWaitMs(200, false, pace, 1940, 2000, 38_800)).toBe(600);
    expect(readingWaitMs(200, false, pace, 1990, 2000, 39_800)).toBe(200);
  });

  it('unwatched, waits longer the longer nothing ended, up to 1 s', () => {
    const pace = new RefillPace();
    const waits = [0, 1, 2, 3, 4, 5, 6].map((i) => readingWaitMs(200, false, pace, 0, 100, i * 400));
    expect(waits).toEqual([200, 200, 400, 600, 800, 1000, 1000]);
  });
});
