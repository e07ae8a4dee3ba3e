import type { Outcome } from '../records.js';
import type { RateLimited } from '../runners/runner.js';
import { sleep } from '../sleep.js';
import type { Store } from '../store/store.js';
import { RefillPace } from './refill-pace.js';

export interface Counts {
  total: number;
  done: number;
  running: number;
  passed: number;
  failed: number;
  error: number;
  canceled: number;
}

export interface Progress extends Counts {
  byTarget: Map<string, Counts>;
  elapsedMs: number;
  /** Targets held back after a 429 where the runs execute, when the runner can tell. */
  rateLimited?: RateLimited[];
}

const emptyCounts = (total = 0): Counts => ({
  total,
  done: 0,
  running: 0,
  passed: 0,
  failed: 0,
  error: 0,
  canceled: 0,
});

const outcomeOf = (status: string, outcome: Outcome | null): Outcome =>
  outcome ?? (status === 'CANCELED' ? 'canceled' : status === 'COMPLETED' ? 'passed' : 'error');

/** One reading of a group's progress from the run index: the same for every runner. */
const readProgress = async (store: Store, groupId: string, total: number, startedAt: number): Promise<Progress> => {
  const progress: Progress = { ...emptyCounts(total), byTarget: new Map(), elapsedMs: Date.now() - startedAt };
  for (const row of await store.groupProgress(groupId)) {
    const label = row.target ?? '-';
    let target = progress.byTarget.get(label);
    if (!target) {
      target = emptyCounts();
      progress.byTarget.set(label, target);
    }
    target.total += row.count;
    for (const c of [progress, target]) {
      if (row.status === 'RUNNING') c.running += row.count;
      else if (row.status !== 'QUEUED') {
        c.done += row.count;
        c[outcomeOf(row.status, row.outcome)] += row.count;
      }
    }
  }
  return progress;
};

/** The most of the follower's time its full readings may take: each groups every run of the group. */
const fullReadingShare = 0.05;

/** When the last full reading ended (epoch ms) and how long it took. */
export interface LastReading {
  at: number;
  costMs: number;
}

/**
 * Whether a full reading may be taken now: a group of 100,000 runs takes 40-110 ms to group, which a terminal's
 * redraw at every reading (5 a second) would spend on half the main thread. A small group's reading is taken at
 * every poll as before.
 */
export const fullReadingDue = (now: number, last: LastReading | undefined): boolean =>
  last === undefined || now - last.at >= last.costMs / fullReadingShare;

export interface FollowOptions {
  intervalMs: number;
  onProgress: (progress: Progress) => void;
  /** Whether the display would show a full reading now; between them only the finished count is read. */
  wantsProgress: () => boolean;
  /** Resolves when the runner has stopped (after a signal): following ends at the next reading. */
  stopped: Promise<void>;
  /** How many of the group's runs are finished, between full readings (default: the store's count of them). */
  countFinished?: () => Promise<number>;
  /** Called before each reading: the follower writes the bundle from what the store committed meanwhile. */
  beforeReading?: () => Promise<void>;
  /** Targets held back after a 429 (the runner's `rateLimited`), asked at each full reading. */
  rateLimited?: () => Promise<RateLimited[]>;
  /**
   * Waits between readings: resolves once `left` more runs have ended, or after `ms` (the runner's `ended`, when
   * its runs execute here). Without it a reading waits out the interval (paced while no display wants progress).
   */
  waitEnded?: (left: number, ms: number) => Promise<void>;
}

/**
 * How long a follower whose runs execute elsewhere waits before its next reading (`done` of `total` runs ended).
 * A display (`watched`) gets one every interval. With none (`-q`, or plain output between its lines) a reading
 * only writes the bundle and watches for the end, and costs the store a few queries whatever it finds: an idle
 * follower at 5 readings a second spent 18 ms of CPU a second (load 10), 0.4 ms per case of a 2,000-case run on
 * one worker. So it waits about half the time the rest should take at the pace runs ended since the last reading
 * (as a submitter's refill does), never less than the interval: seldom while the end is far, every interval as it
 * nears. `pace` is asked every time, so it knows the pace however the waits alternate.
 */
export const readingWaitMs = (
  intervalMs: number,
  watched: boolean,
  pace: RefillPace,
  done: number,
  total: number,
  now: number,
): number => {
  const paced = pace.next(done, total - done, now);
  return watched ? intervalMs : Math.max(intervalMs, paced);
};

/** Polls the store until every run of the group is terminal, or the runner stopped. */
export const follow = async (
  store: Store,
  groupId: string,
  total: number,
  options: FollowOptions,
): Promise<Progress> => {
  const startedAt = Date.now();
  let stopped = false;
  // A stop ends a wait at once: a paced one lasts up to a second.
  const stop = new AbortController();
  void options.stopped.then(() => {
    stopped = true;
    stop.abort();
  });
  const pace = new RefillPace();
  const countFinished = options.countFinished ?? (() => store.countFinished(groupId));
  let last: LastReading | undefined;
  const reading = async (): Promise<Progress> => {
    const from = Date.now();
    const progress = await readProgress(store, groupId, total, startedAt);
    const at = Date.now();
    last = { at, costMs: at - from };
    // A pause that cannot be read (Redis briefly away) is only not shown.
    const limited = await options.rateLimited?.().catch(() => undefined);
    if (limited) progress.rateLimited = limited;
    options.onProgress(progress);
    return progress;
  };
  for (;;) {
    await options.beforeReading?.();
    // A full reading groups every run of the group; counting the finished ones reads the index alone.
    const full = options.wantsProgress() && fullReadingDue(Date.now(), last);
    const done = full ? (await reading()).done : await countFinished();
    if (done >= total || stopped) return reading();
    // The runs' end is read at once rather than up to an interval later; a single run's end wakes nothing.
    if (options.waitEnded) await options.waitEnded(total - done, options.intervalMs);
    else {
      const ms = readingWaitMs(options.intervalMs, options.wantsProgress(), pace, done, total, Date.now());
      await sleep(ms, stop.signal).catch(() => {});
    }
  }
};
