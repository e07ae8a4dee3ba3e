import type { BudgetSpend } from '../bundle/summary.js';
import { type PlannedCase, renderPrompt } from '../plan/matrix.js';

/** A case as the budget sees it: the cases whose costs predict its own, and its cost before any has finished. */
export interface BudgetedCase {
  key: string;
  /** Cases of one eval file and one target: the same prompts' shape, the same model and the same judges. */
  bucket: string;
  priorUsd: number;
}

/** Tokens in a text, roughly: about 4 characters each in English, the usual rule of thumb. */
const approxTokens = (text: string): number => Math.ceil(text.length / 4);

/**
 * A case before anything like it has finished: its prompt at the target's input price plus a full reply
 * (`max_tokens`) at the output price. Judge calls, tool loops and a reply with no cap are unknown until a
 * case has run, so this is a floor, and Budget lets only one case of a bucket run until one has finished.
 */
export const budgetedCase = (c: PlannedCase): BudgetedCase => {
  const price = c.target.price;
  const rendered = renderPrompt(c.promptSpec, c.vars);
  const promptText = rendered.messages ? rendered.messages.map((m) => m.content).join('\n') : rendered.prompt;
  const priorUsd = price
    ? (approxTokens(promptText) * price.input + (c.target.maxOutputTokens ?? 0) * price.output) / 1_000_000
    : 0;
  return { key: c.key, bucket: `${c.identity.eval}\n${c.identity.target}`, priorUsd };
};

// Sums of floating-point costs drift by a few ulps; a case that fits exactly must not be refused for it.
const slack = 1e-9;

/**
 * One command's budget: each case reserves its estimate before it starts and settles to its real cost (target
 * and judge calls, from its committed row) when it ends. A case starts only while spent + reserved + its
 * estimate stays within the limit, so the limit is exceeded only by cases that cost more than their estimate.
 *
 * The estimate of a case is the most that any finished case of its bucket cost: cases of one eval and target
 * share prompts' shape, model and judges, and the maximum (not the mean) keeps a run of cheap cases from
 * letting an expensive one through. Before any has finished there is nothing to go by but the prior, so a
 * bucket runs one case at a time until its first finishes.
 */
export class Budget {
  private spent = 0;
  private reserved = 0;
  private peak = 0;
  private readonly held = new Map<string, { bucket: string; usd: number }>();
  /** The most a finished case of each bucket cost. */
  private readonly observed = new Map<string, number>();
  /** Buckets with a case in flight and none finished yet. */
  private readonly probing = new Set<string>();

  constructor(readonly limitUsd: number) {}

  estimate(c: BudgetedCase): number {
    return this.observed.get(c.bucket) ?? c.priorUsd;
  }

  /** Whether `c` may start now. */
  fits(c: BudgetedCase): boolean {
    if (this.probing.has(c.bucket)) return false;
    return this.spent + this.reserved + this.estimate(c) <= this.limitUsd + slack;
  }

  reserve(c: BudgetedCase): void {
    const usd = this.estimate(c);
    this.held.set(c.key, { bucket: c.bucket, usd });
    this.reserved += usd;
    if (!this.observed.has(c.bucket)) this.probing.add(c.bucket);
    this.peak = Math.max(this.peak, this.spent + this.reserved);
  }

  /**
   * A case ended: its reservation becomes what it cost. `costUsd` null (unknown) counts the reservation as
   * spent. Only a finished case (passed or failed) teaches its bucket's estimate: an error may have stopped
   * before most of its calls. Settling a case that holds nothing (settled already, or never reserved) is a no-op.
   */
  settle(key: string, costUsd: number | null, finished: boolean): void {
    const held = this.held.get(key);
    if (!held) return;
    this.held.delete(key);
    this.reserved -= held.usd;
    this.spent += costUsd ?? held.usd;
    this.probing.delete(held.bucket);
    if (finished && costUsd !== null) {
      this.observed.set(held.bucket, Math.max(this.observed.get(held.bucket) ?? 0, costUsd));
    }
  }

  /** Cases that ended without a committed result (a lost store write): what they reserved counts as spent. */
  settleUnrecorded(): void {
    for (const key of [...this.held.keys()]) this.settle(key, null, false);
  }

  report(): BudgetSpend {
    return { limit_usd: this.limitUsd, spent_usd: this.spent, reserved_peak_usd: this.peak };
  }

  /** Why a case cannot start, for its row. */
  refusal(c: BudgetedCase): string {
    const usd = (n: number): string => `$${n.toFixed(4)}`;
    return `not started: the budget of ${usd(this.limitUsd)} cannot cover it (${usd(this.spent)} spent, the case estimated at ${usd(this.estimate(c))}); --resume with a larger --budget-usd runs it`;
  }
}
