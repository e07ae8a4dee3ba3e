import { constants, type NodeGCPerformanceDetail, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/**
 * What a small heap may grow by between full collections, whatever it keeps. At 5,000 cases (bench/suite), 16 MB
 * took 5 full collections, with a peak RSS of ~130 MB at -j 50 and ~140 MB at -j 200; 32 MB took 3, but ~160 MB at
 * -j 200, over bench/suite's 150 MB goal.
 */
const slackBytes = 16 * 2 ** 20;
/** A large heap grows to at most 1.5× what its last full collection kept: bin/proctor.js's bound for every command. */
const boundPercent = 50;

/** The growth that lets the heap reach the larger of live + 16 MB and 1.5 × live before its next full collection. */
const growingPercent = (liveBytes: number): number =>
  Math.max(boundPercent, Math.ceil((slackBytes / Math.max(liveBytes, 1)) * 100));

/** Sets the next full collection's growth from what the heap holds now. */
const sizeNextGrowth = (): void => {
  setFlagsFromString(`--heap-growing-percent=${growingPercent(getHeapStatistics().used_heap_size)}`);
};

const isFullCollection = (entry: PerformanceEntry): boolean =>
  (entry as { detail?: NodeGCPerformanceDetail }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;

/**
 * Sizes V8's old generation by what a run keeps. bin/proctor.js bounds its growth to 1.5× what the last full
 * collection kept, so a 100,000-test plan never holds 4× its size; but a run of a few thousand cases keeps ~17
 * MB, and at 1.5× it collected every ~8 MB its in-flight cases promoted: 8 full collections at 5,000 cases, ~6% of
 * the run's instructions (valgrind), where V8's own policy took 2. From a run's start, each full collection sets
 * the next one's growth: live + 16 MB while that is more than 1.5× live, which keeps large heaps bounded as before.
 */
export class OldGeneration {
  private observer: PerformanceObserver | undefined;

  /** From now on, each full collection sizes the next. */
  follow(): void {
    if (this.observer) return;
    this.observer = new PerformanceObserver((list) => {
      if (list.getEntries().some(isFullCollection)) sizeNextGrowth();
    });
    this.observer.observe({ entryTypes: ['gc'] });
    sizeNextGrowth();
  }

  /** bin/proctor.js's bound again: what follows the run (its report) may read a large bundle. */
  dispose(): void {
    this.observer?.disconnect();
    this.observer = undefined;
    setFlagsFromString(`--heap-growing-percent=${boundPercent}`);
  }
}
