import type { CaseIdentity } from '../records.js';
import type { IndexRow } from './row.js';
import type { RowVisitor } from './row-visitor.js';

/** When a case repeated over samples counts as passed: every sample, any sample, or at least a fraction. */
export type PassRule = { kind: 'all' } | { kind: 'any' } | { kind: 'fraction'; at: number };

/** A case over all its samples (`--repeat K`): how many passed, and whether the rule calls it passed. */
export interface RepeatedCase {
  /** The identity of its first sample, standing for the case. */
  identity: CaseIdentity;
  samples: number;
  passed: number;
  pass: boolean;
  /** Its samples disagree: some passed and some did not. */
  flaky: boolean;
}

export const describePassRule = (rule: PassRule): string =>
  rule.kind === 'fraction' ? `≥ ${rule.at} of samples` : rule.kind;

const passes = (rule: PassRule, passed: number, samples: number): boolean =>
  rule.kind === 'all' ? passed === samples : rule.kind === 'any' ? passed > 0 : passed / samples >= rule.at;

/**
 * The latest rows grouped by case (identity without its sample), in first-seen order: per case its first identity
 * and two counts, whatever the rule that judges it later.
 */
export class RepeatTally implements RowVisitor {
  private readonly cases = new Map<string, RepeatedCase>();

  visit(row: IndexRow): void {
    const { eval: path, test, prompt, target } = row.identity;
    const id = JSON.stringify([path, test, prompt, target]);
    let c = this.cases.get(id);
    if (!c) {
      c = { identity: row.identity, samples: 0, passed: 0, pass: false, flaky: false };
      this.cases.set(id, c);
    }
    c.samples++;
    if (row.outcome === 'passed') c.passed++;
  }

  /** Each case judged by `rule`. */
  judged(rule: PassRule): RepeatedCase[] {
    return [...this.cases.values()].map((c) => ({
      ...c,
      pass: passes(rule, c.passed, c.samples),
      flaky: c.passed > 0 && c.passed < c.samples,
    }));
  }
}

/** Groups the latest rows by case and judges each by `rule`, in first-seen order. */
export const repeatedCases = (rows: Iterable<IndexRow>, rule: PassRule): RepeatedCase[] => {
  const tally = new RepeatTally();
  for (const row of rows) tally.visit(row);
  return tally.judged(rule);
};
