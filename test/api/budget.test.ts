import { describe, expect, it } from 'vitest';
import { Budget, type BudgetedCase } from '../../src/api/budget.js';

const aCase = (key: string, bucket = 'a', priorUsd = 0): BudgetedCase => ({ key, bucket, priorUsd });

describe('Budget', () => {
  it('runs one case of a bucket until one has finished, then reserves the most a finished case cost', () => {
    const budget = new Budget(1);
    budget.reserve(aCase('1'));
    expect(budget.fits(aCase('2'))).toBe(false);
    // Another bucket has its own first case.
    expect(budget.fits(aCase('x', 'b'))).toBe(true);
    budget.settle('1', 0.3, true);
    expect(budget.estimate(aCase('2'))).toBe(0.3);
    budget.reserve(aCase('2'));
    budget.reserve(aCase('3'));
    // 0.3 spent + 0.6 reserved: another 0.3 would pass 1.
    expect(budget.fits(aCase('4'))).toBe(false);
    budget.settle('2', 0.1, true);
    expect(budget.fits(aCase('4'))).toBe(true);
    expect(budget.estimate(aCase('4'))).toBe(0.3);
    const report = budget.report();
    expect(report.spent_usd).toBeCloseTo(0.4, 12);
    expect(report.reserved_peak_usd).toBeCloseTo(0.9, 12);
  });

  it('refuses a first case whose prior alone passes the limit', () => {
    const budget = new Budget(0.01);
    expect(budget.fits(aCase('1', 'a', 0.02))).toBe(false);
    expect(budget.refusal(aCase('1', 'a', 0.02))).toContain('the case estimated at $0.0200');
  });

  it('learns nothing from an errored case, and counts an unknown cost as what was reserved', () => {
    const budget = new Budget(1);
    budget.reserve(aCase('1', 'a', 0.05));
    budget.settle('1', 0, false);
    // The error freed the bucket, but a zero-cost error must not make the next case look free.
    expect(budget.estimate(aCase('2', 'a', 0.05))).toBe(0.05);
    budget.reserve(aCase('2', 'a', 0.05));
    budget.settle('2', null, true);
    budget.settle('2', 0.5, true);
    expect(budget.report().spent_usd).toBeCloseTo(0.05, 12);
    budget.reserve(aCase('3', 'a', 0.05));
    budget.settleUnrecorded();
    expect(budget.report().spent_usd).toBeCloseTo(0.1, 12);
  });
});
