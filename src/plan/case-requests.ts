import type { SubmitRequest } from '../runners/runner.js';
import type { PlannedCase } from './matrix.js';

/**
 * The submit requests of a plan's selected cases, each built only when the dispatcher takes it: a request
 * (its task, target and graders as plain data) costs a few KB, so a 100,000-case run holds the ones in flight,
 * never all of them. What was taken belongs to the runner from then on; nothing here keeps it, not even its
 * planned case (~225 B with a JSONL test held by its line), so the plan shrinks as the run goes.
 */
export class CaseRequests {
  private next = 0;
  private readonly cases: (PlannedCase | undefined)[];
  readonly size: number;

  /** `cases` becomes this object's: each slot is cleared as its request is taken. */
  constructor(
    cases: PlannedCase[],
    private readonly build: (c: PlannedCase) => SubmitRequest,
  ) {
    this.cases = cases;
    this.size = cases.length;
  }

  /** How many have been built and handed out so far. */
  get taken(): number {
    return this.next;
  }

  /** The case the request `ahead` places after the next will be built from, without building it. */
  peek(ahead = 0): PlannedCase | undefined {
    return this.cases[this.next + ahead];
  }

  /** Builds and hands out the next `n` requests (fewer at the end, none once all are taken). */
  take(n: number): SubmitRequest[] {
    const end = Math.min(this.cases.length, this.next + Math.max(0, n));
    const out: SubmitRequest[] = [];
    for (; this.next < end; this.next++) {
      out.push(this.build(this.cases[this.next] as PlannedCase));
      this.cases[this.next] = undefined;
    }
    return out;
  }
}

/**
 * How many of a command's cases may be submitted and not yet finished, for a budget of `maxConcurrency`: enough
 * that a case finishing finds the next one already queued in the runner, few enough that memory stays flat.
 * Submitted half a window at a time, so the store takes them in a few large transactions.
 */
export const submitWindow = (maxConcurrency: number): number => Math.max(200, 4 * maxConcurrency);
