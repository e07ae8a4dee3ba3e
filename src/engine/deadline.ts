import { ProctorError } from '../errors.js';

/**
 * A time limit as an AbortSignal that aborts with a `timeout` ProctorError as its reason, so whatever it stops
 * (a grader, a target) can tell a deadline from a cancellation. `restart()` gives a retry a fresh limit: the
 * same signal while it has not fired (steps in flight keep theirs), a new one once it has.
 */
export class Deadline {
  private controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly seconds: number,
    private readonly what: string,
  ) {
    this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  restart(): void {
    if (this.controller.signal.aborted) this.controller = new AbortController();
    this.arm();
  }

  /** The timer is not unref'd (a grader looping in a worker holds nothing else), so it must be cleared. */
  dispose(): void {
    clearTimeout(this.timer);
  }

  private arm(): void {
    clearTimeout(this.timer);
    const controller = this.controller;
    this.timer = setTimeout(
      () => controller.abort(new ProctorError('timeout', `${this.what} exceeded its timeout_s (${this.seconds}s)`)),
      this.seconds * 1000,
    );
  }
}
