import { describe, expect, it } from 'vitest';
import { RefillPace } from '../../src/api/refill-pace.js';

describe('RefillPace', () => {
  it('counts again every 50 ms while cases finish fast (the local runner)', () => {
    const pace = new RefillPace();
    expect(pace.next(0, 100, 1000)).toBe(50);
    // 100 finished in 50 ms: the excess goes in a blink.
    expect(pace.next(100, 100, 1050)).toBe(50);
  });

  it('waits about half the time the excess takes at the pace observed, at most 1 s', () => {
    const pace = new RefillPace();
    pace.next(0, 100, 0);
    // 10 cases in 200 ms (a fleet of 10 slots on 200 ms calls): 40 in excess take 800 ms.
    expect(pace.next(10, 40, 200)).toBe(400);
    expect(pace.next(30, 100, 600)).toBe(1000);
    expect(pace.next(80, 4, 1600)).toBe(50);
  });

  it('while nothing finishes, waits half as long as nothing has, up to 1 s', () => {
    const pace = new RefillPace();
    const waits = [0, 1, 2, 3, 4, 5, 6].map((i) => pace.next(0, 100, i * 1000));
    expect(waits).toEqual([50, 500, 1000, 1000, 1000, 1000, 1000]);
  });

  it('is not a whole case late with the first ends: counted as it said, each wait is half the time since the last end', () => {
    // A fleet's first cases end ~0.5 s after they were submitted; doubling the wait each time had it at 800 ms by
    // then, and the queue ran dry before the next count.
    const pace = new RefillPace();
    let now = 0;
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const wait = pace.next(0, 40, now);
      waits.push(wait);
      now += wait;
    }
    expect(waits).toEqual([50, 50, 50, 75, 112.5, 168.75]);
    // Ends since: the pace decides again.
    pace.next(0, 40, 500);
    expect(pace.next(20, 20, 600)).toBe(50);
    expect(pace.next(20, 20, 700)).toBe(50);
    expect(pace.next(20, 20, 1100)).toBe(250);
  });
});
