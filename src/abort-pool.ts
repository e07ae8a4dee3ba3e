import { getEventListeners } from 'node:events';

/**
 * Abort listeners that stay on a signal for its life but act only on work then in flight (the HTTP client's, which
 * fails the calls under way): a signal holding no others may serve new work.
 */
const idleListeners = new WeakSet<object>();

/** Marks `listener` as one that does nothing once the work it watches is done (see AbortPool). */
export const idleWhenDone = <F extends object>(listener: F): F => {
  idleListeners.add(listener);
  return listener;
};

/**
 * How many pieces of work one controller serves at most: `AbortSignal.any` keeps a reference to each composite
 * signal it makes in its sources, for their life (Node 20), so a signal that serves forever would gather them.
 */
const maxUses = 256;

/** A controller from the pool, with how many pieces of work it has served. */
export interface PooledAbort {
  readonly controller: AbortController;
  uses: number;
}

/**
 * AbortControllers handed out again once the work they served is done, unaborted, and has left no listener but idle
 * ones on their signal. Node makes a signal slowly (an EventTarget given a new prototype: ~6 µs here, and slower to
 * read and listen to after), and the HTTP client sets its one listener per signal; a run made both once per case, ~4%
 * of a 5,000-case eval run's main thread.
 */
export class AbortPool {
  private readonly idle: PooledAbort[] = [];

  constructor(private readonly max: number) {}

  take(): PooledAbort {
    const pooled = this.idle.pop() ?? { controller: new AbortController(), uses: 0 };
    pooled.uses++;
    return pooled;
  }

  /** Back into the pool, unless its signal was aborted or still holds a listener of the work it served. */
  give(pooled: PooledAbort): void {
    const signal = pooled.controller.signal;
    if (signal.aborted || pooled.uses >= maxUses || this.idle.length >= this.max) return;
    for (const listener of getEventListeners(signal, 'abort')) if (!idleListeners.has(listener)) return;
    this.idle.push(pooled);
  }
}
