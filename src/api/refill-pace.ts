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
  /** When the finished count last moved, or was first taken. */
  private movedAt = 0;

  /** `finished`: cases finished so far; `excess`: unfinished ones beyond the refill mark. */
  next(finished: number, excess: number, now: number): number {
    const before = this.finished;
    const perMs = before === undefined || now <= this.at ? 0 : (finished - before) / (now - this.at);
    this.finished = finished;
    this.at = now;
    if (finished !== before) this.movedAt = now;
    // Nothing finished meanwhile: the cases under way take at least as long as none has finished, so the count
    // waits half that, late by at most half a case when they all end at once. Doubling the last wait instead, a
    // fleet's first cases (200 ms calls, ~0.5 s to the first end) had it at 800 ms as they ended, and the queue
    // ran dry for 0.3 s before the next batch went in.
    const wanted = perMs > 0 ? excess / perMs / 2 : (now - this.movedAt) / 2;
    return Math.min(maxWaitMs, Math.max(minWaitMs, wanted));
  }
}
