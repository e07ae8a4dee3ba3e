const minWaitMs = 50;
const maxWaitMs = 1000;

/**
 * How long a submitter whose window is full waits before counting its unfinished cases again: about half the
 * time the runner needs, at the pace it finished cases since the last count, to bring them down to where the
 * next batch goes in. A fast runner (local, short cases) is counted every 50 ms as before and never runs dry; a
 * fleet working through 200 ms model calls, or an agent taking minutes a case, is not asked 20 times a second.
 */
export class RefillPace {
  private finished: number | undefined;
  private at = 0;
  private waitMs = minWaitMs;

  /** `finished`: cases finished so far; `excess`: unfinished ones beyond the refill mark. */
  next(finished: number, excess: number, now: number): number {
    const before = this.finished;
    const perMs = before === undefined || now <= this.at ? 0 : (finished - before) / (now - this.at);
    this.finished = finished;
    this.at = now;
    // No pace known yet: count again soon.
    if (before === undefined) return this.waitMs;
    // Nothing finished meanwhile: long cases, so wait longer each time.
    const wanted = perMs > 0 ? excess / perMs / 2 : this.waitMs * 2;
    this.waitMs = Math.min(maxWaitMs, Math.max(minWaitMs, wanted));
    return this.waitMs;
  }
}
