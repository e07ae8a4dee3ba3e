import type { IndexRow } from '../bundle/row.js';
import type { BudgetSpend } from '../bundle/summary.js';
import type { EvalRunPlan } from '../plan/eval-plan.js';
import type { PlannedCase } from '../plan/matrix.js';
import { type CaseRequest, recordNotStarted } from '../runners/not-started.js';
import { currentOwner } from '../runners/owner.js';
import type { Runner } from '../runners/runner.js';
import { sleep } from '../sleep.js';
import type { Store } from '../store/store.js';
import { Budget, type BudgetedCase, budgetedCase } from './budget.js';

/** A case's spend as its row records it: the target's calls and the judges'; null when either is unknown. */
const rowCost = (row: IndexRow): number | null => {
  const target = row.usage.cost_usd ?? null;
  const judge = row.usage.judge ? (row.usage.judge.cost_usd ?? null) : 0;
  return target === null || judge === null ? null : target + judge;
};

/** Committed results read at a time. */
const pageSize = 200;

/**
 * Submits a plan's cases under its budget (Budget decides which may start), to whichever runner runs them: a
 * case is submitted only when it may start, and at most the plan's `max_concurrency` are in flight, so nothing
 * waits in a runner's queue holding a reservation. Costs are settled from the results the store commits, the
 * same record for the local and the queue runner. When the next case cannot fit and nothing is in flight to
 * free room, it and every case after it are recorded as not started (error `budget_exceeded`).
 */
export class BudgetDispatch {
  private readonly budget: Budget;
  private cursor = 0;
  private submitted = 0;
  /** The next case as the budget sees it, worked out once however often it is asked whether it fits. */
  private head: { planned: PlannedCase; budgeted: BudgetedCase } | undefined;

  constructor(
    private readonly plan: EvalRunPlan & { budgetUsd: number },
    private readonly runner: Runner,
    private readonly store: Store,
  ) {
    this.budget = new Budget(plan.budgetUsd);
  }

  private next(ahead = 0): BudgetedCase | undefined {
    const planned = this.plan.requests.peek(ahead);
    if (!planned) return undefined;
    if (this.head?.planned !== planned) this.head = { planned, budgeted: budgetedCase(planned) };
    return this.head.budgeted;
  }

  /**
   * Settles the cases committed since the last read. `fromStart`: reads every result again, since PostgreSQL
   * numbers a result when its transaction inserts, not when it commits, and a cursor can pass a late one.
   */
  private async settle(fromStart = false): Promise<void> {
    if (fromStart) this.cursor = 0;
    for (;;) {
      const page = await this.store.readResults(this.plan.groupId, this.cursor, pageSize);
      for (const r of page) {
        this.cursor = r.seq;
        const row = r.row as unknown as IndexRow;
        this.budget.settle(r.caseKey, rowCost(row), row.outcome === 'passed' || row.outcome === 'failed');
      }
      if (page.length < pageSize) return;
    }
  }

  private async inFlight(): Promise<number> {
    return this.submitted - (await this.store.countFinished(this.plan.groupId));
  }

  /** Submits (or records as not started) every request of the plan, building each as it goes. */
  async submit(signal: AbortSignal | undefined): Promise<void> {
    const requests = this.plan.requests;
    while (requests.peek() && !signal?.aborted) {
      await this.settle();
      let inFlight = await this.inFlight();
      let ready = 0;
      for (let c = this.next(); c && inFlight + ready < this.plan.maxConcurrency; c = this.next(ready)) {
        if (!this.budget.fits(c)) break;
        this.budget.reserve(c);
        ready++;
      }
      if (ready > 0) {
        await this.runner.submitMany(requests.take(ready));
        this.submitted += ready;
        continue;
      }
      if (inFlight > 0) {
        // Short: at a high concurrency slots free every few ms, and a case waits for this poll to start.
        await sleep(10);
        continue;
      }
      // Nothing in flight: every reservation must be settled before the budget is called spent.
      await this.settle(true);
      this.budget.settleUnrecorded();
      inFlight = await this.inFlight();
      const next = this.next();
      if (inFlight > 0 || (next && this.budget.fits(next))) continue;
      const refusal = this.budget.refusal(next as BudgetedCase);
      for (let batch = requests.take(pageSize); batch.length > 0; batch = requests.take(pageSize))
        await recordNotStarted(
          this.store,
          batch as CaseRequest[],
          { kind: 'budget_exceeded', message: refusal, retryable: false },
          currentOwner(),
          process.env,
        );
    }
  }

  /** What the command spent, once every case has ended. */
  async report(): Promise<BudgetSpend> {
    await this.settle(true);
    this.budget.settleUnrecorded();
    return this.budget.report();
  }
}
