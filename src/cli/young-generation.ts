import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

const growth = (factor: 1 | 2): void => {
  setFlagsFromString(`--semi-space-growth-factor=${factor}`);
};

const youngBytes = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

/**
 * Keeps V8's young generation small through a long command. It doubles, up to 2 × 16 MB, as objects survive its
 * collections, which a run's in-flight cases always do; its maximum (--max-semi-space-size) is read only when the
 * process starts, but its growth factor is read at each growth. So its growth is stopped from here on, and let go
 * by `growTo` only up to a size: a collection is seen once the event loop turns, so a long synchronous stretch (a
 * plan of 100,000 cases) with growth on would double it several times before it could be stopped.
 */
export class YoungGeneration {
  private observer: PerformanceObserver | undefined;

  constructor() {
    growth(1);
  }

  /** Lets it grow to `bytes` (both semi-spaces), and again should V8 shrink it meanwhile. */
  growTo(bytes: number): void {
    if (this.observer) return;
    let growing = false;
    const follow = (): void => {
      const grow = youngBytes() < bytes;
      if (grow === growing) return;
      growing = grow;
      growth(grow ? 2 : 1);
    };
    this.observer = new PerformanceObserver(follow);
    this.observer.observe({ entryTypes: ['gc'] });
    follow();
  }

  /** V8's own policy again. */
  dispose(): void {
    this.observer?.disconnect();
    growth(2);
  }
}
