// V8's old generation is sized by what a run keeps. The heap growth flag is process-wide, so each case runs in a
// fresh Node process, started as bin/proctor.js starts a command: growth bounded to 1.5×.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const module = fileURLToPath(new URL('../../src/cli/old-generation.ts', import.meta.url));

interface Churned {
  majors: number;
  peakMb: number;
}

/**
 * Keeps `liveMb` of 1 KB strings, then promotes `churnMb` of garbage a MB per turn of the event loop (a ring of
 * `ringMb` of strings outlives the 1 MB young generation, as a run's in-flight cases do); counts the full collections
 * meanwhile and the heap's largest size. `followed`: an OldGeneration sizes the heap from the start of the churn.
 */
const churn = (liveMb: number, ringMb: number, churnMb: number, followed: boolean): Churned => {
  const script = `
    import { constants, PerformanceObserver } from 'node:perf_hooks';
    import { getHeapStatistics, setFlagsFromString } from 'node:v8';
    import { OldGeneration } from ${JSON.stringify(module)};
    setFlagsFromString('--heap-growing-percent=50');
    const kept = Array.from({ length: ${liveMb} * 1024 }, (_, i) => 'k'.repeat(1000) + i);
    let majors = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
    }).observe({ entryTypes: ['gc'] });
    const old = new OldGeneration();
    if (${followed}) old.follow();
    await new Promise((resolve) => setImmediate(resolve));
    majors = 0;
    let peak = 0;
    const ring = new Array(${ringMb} * 1024);
    for (let turn = 0; turn < ${churnMb}; turn++) {
      for (let i = 0; i < 1024; i++) ring[(turn * 1024 + i) % ring.length] = 'g'.repeat(1000) + i;
      peak = Math.max(peak, getHeapStatistics().used_heap_size);
      await new Promise((resolve) => setImmediate(resolve));
    }
    old.dispose();
    console.log(JSON.stringify({ majors, peakMb: peak / 2 ** 20, kept: kept.length }));
  `;
  const child = spawnSync(
    process.execPath,
    ['--max-semi-space-size=1', '--import', 'tsx', '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout) as Churned;
};

describe('the old generation of a run', () => {
  it('a small heap grows by 16 MB between full collections, not by half of itself', () => {
    const bounded = churn(4, 4, 300, false);
    const followed = churn(4, 4, 300, true);
    // Bounded to 1.5× of what it keeps (~16 MB), it collected every ~8 MB promoted (10 times); with 16 MB of room,
    // every ~16 MB (6 times), and its peak never more than ~16 MB (and the young generation) past the bounded one.
    expect(bounded.majors).toBeGreaterThanOrEqual(8);
    expect(followed.majors).toBeLessThanOrEqual(bounded.majors * 0.7);
    expect(followed.peakMb).toBeLessThan(bounded.peakMb + 24);
  });

  it('a large heap still grows to at most 1.5× what it keeps', () => {
    const bounded = churn(120, 16, 300, false);
    const followed = churn(120, 16, 300, true);
    // Bounded, its peak was ~118 MB; given 1,000 MB of room instead of 16, ~130 MB. With 16 it keeps to 1.5×.
    expect(followed.peakMb).toBeLessThan(bounded.peakMb + 16);
  });
});
