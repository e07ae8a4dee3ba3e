import type { ConcurrencyLimit } from './runner.js';

/** Something waiting to run under concurrency limits. */
export interface Schedulable {
  limits: readonly ConcurrencyLimit[];
}

/** How many runs hold each limit key right now. */
export type InFlight = Map<string, number>;

export const hasRoom = (limits: readonly ConcurrencyLimit[], inFlight: InFlight): boolean =>
  limits.every((l) => (inFlight.get(l.key) ?? 0) < l.limit);

export const hold = (limits: readonly ConcurrencyLimit[], inFlight: InFlight, by: 1 | -1): void => {
  for (const l of limits) inFlight.set(l.key, (inFlight.get(l.key) ?? 0) + by);
};

/**
 * The one scheduling rule of every runner. Items wait in buckets by the limits they share (typically one bucket
 * per target of a run), and the next item is the head of the first bucket, in turn, whose limits all have room:
 * one work-conserving queue, so a slow target never holds slots another target could use, and buckets (runs,
 * targets) take turns. The local runner keeps one for its process; the queue dispatcher builds one per dispatch
 * from the store's counts, so the limits hold across the fleet.
 */
export class Scheduler<T extends Schedulable> {
  private readonly buckets = new Map<string, T[]>();
  private readonly order: string[] = [];
  private next = 0;

  constructor(readonly inFlight: InFlight = new Map()) {}

  add(item: T): void {
    const signature = item.limits.map((l) => l.key).join('\n');
    let bucket = this.buckets.get(signature);
    if (!bucket) {
      bucket = [];
      this.buckets.set(signature, bucket);
      this.order.push(signature);
    }
    bucket.push(item);
  }

  /** Takes the next item that may start and counts it in flight; undefined when none may. */
  take(): T | undefined {
    const n = this.order.length;
    for (let i = 0; i < n; i++) {
      const index = (this.next + i) % n;
      const bucket = this.buckets.get(this.order[index] as string);
      const head = bucket?.[0];
      if (head && hasRoom(head.limits, this.inFlight)) {
        this.next = (index + 1) % n;
        bucket.shift();
        hold(head.limits, this.inFlight, 1);
        return head;
      }
    }
    return undefined;
  }

  /** An item that was taken has ended: its limits have room again. */
  release(item: T): void {
    hold(item.limits, this.inFlight, -1);
  }

  /** Removes the first waiting item that matches; undefined when none does. */
  remove(match: (item: T) => boolean): T | undefined {
    for (const bucket of this.buckets.values()) {
      const index = bucket.findIndex(match);
      if (index >= 0) return bucket.splice(index, 1)[0];
    }
    return undefined;
  }

  /** Removes and returns every waiting item. */
  clear(): T[] {
    const all = [...this.buckets.values()].flat();
    this.buckets.clear();
    this.order.length = 0;
    this.next = 0;
    return all;
  }

  get waiting(): boolean {
    for (const bucket of this.buckets.values()) if (bucket.length > 0) return true;
    return false;
  }
}
