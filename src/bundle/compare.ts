import type { CaseIdentity, Outcome } from '../records.js';
import type { IndexRow } from './row.js';
import type { RowVisitor } from './row-visitor.js';

/** A case's latest result on one side. */
export interface CaseSide {
  outcome: Outcome;
  score: number | null;
}

/** A case that differs between the two bundles; `base` or `head` is null when only the other has it. */
export interface CaseChange {
  key: string;
  identity: CaseIdentity;
  base: CaseSide | null;
  head: CaseSide | null;
}

export interface PassRate {
  total: number;
  passed: number;
  pass_rate: number;
}

/** Pass rates of one target (or `all`); a side is null when that bundle has no case of the target. */
export interface TargetDelta {
  target: string;
  base: PassRate | null;
  head: PassRate | null;
  /** head − base pass rate, when both sides have the target. */
  delta: number | null;
}

/** The result of comparing two bundles, printed as is by `results compare --json` (so snake_case). */
export interface Comparison {
  schema: 'proctor.compare/1';
  base: string;
  head: string;
  targets: TargetDelta[];
  overall: TargetDelta;
  counts: {
    common: number;
    unchanged: number;
    regressed: number;
    fixed: number;
    score_changed: number;
    outcome_changed: number;
    only_in_base: number;
    only_in_head: number;
  };
  /** passed → failed or error. */
  regressed: CaseChange[];
  /** failed or error → passed. */
  fixed: CaseChange[];
  /** Same outcome, different score. */
  score_changed: CaseChange[];
  /** Any other change of outcome (failed → error, passed → canceled, …): neither a regression nor a fix. */
  outcome_changed: CaseChange[];
  only_in_base: CaseChange[];
  only_in_head: CaseChange[];
  /** The CI verdict: fails on a regression, a lost case, or fewer passing cases than the base beyond `tolerance`. */
  gate: Gate;
  verdict: string;
}

export interface Gate {
  pass: boolean;
  /** How many fewer passing cases than the base the head may have. */
  tolerance: number;
  passing: { base: number; head: number };
  /** Cases of the base the head does not have, or has only as canceled: never run, so never checked. */
  lost: number;
  failures: string[];
}

const isBad = (o: Outcome): boolean => o === 'failed' || o === 'error';

// Scores are averages of grader scores; a difference below this is float noise, not a change.
const scoreEpsilon = 1e-9;

const scoreChanged = (a: number | null, b: number | null): boolean =>
  a === null || b === null ? a !== b : Math.abs(a - b) > scoreEpsilon;

/** Pass rates of one bundle's latest rows, per target and overall. */
class Rates {
  readonly byTarget = new Map<string, PassRate>();
  all: PassRate | undefined;

  add(target: string, outcome: Outcome): void {
    const rate = this.byTarget.get(target) ?? { total: 0, passed: 0, pass_rate: 0 };
    this.byTarget.set(target, rate);
    this.all ??= { total: 0, passed: 0, pass_rate: 0 };
    for (const r of [rate, this.all]) {
      r.total++;
      if (outcome === 'passed') r.passed++;
      r.pass_rate = r.passed / r.total;
    }
  }
}

const delta = (target: string, base: PassRate | undefined, head: PassRate | undefined): TargetDelta => ({
  target,
  base: base ?? null,
  head: head ?? null,
  delta: base && head ? head.pass_rate - base.pass_rate : null,
});

const pct = (rate: PassRate | null): string => (rate ? `${(rate.pass_rate * 100).toFixed(1)}%` : '-');

const gateOf = (c: Omit<Comparison, 'gate' | 'verdict'>, tolerance: number): Gate => {
  const lost = c.only_in_base.length + c.outcome_changed.filter((x) => x.head?.outcome === 'canceled').length;
  const passing = { base: c.overall.base?.passed ?? 0, head: c.overall.head?.passed ?? 0 };
  const failures = [
    ...(c.counts.regressed ? [`${c.counts.regressed} case(s) regressed`] : []),
    ...(lost ? [`${lost} case(s) lost (canceled or missing in head)`] : []),
    ...(passing.head < passing.base - tolerance
      ? [`passing ${passing.base} → ${passing.head} (tolerance ${tolerance})`]
      : []),
  ];
  return { pass: failures.length === 0, tolerance, passing, lost, failures };
};

const verdictOf = (c: Omit<Comparison, 'gate' | 'verdict'>): string => {
  const rates = `pass rate ${pct(c.overall.base)} → ${pct(c.overall.head)}`;
  const { counts } = c;
  if (counts.common === 0) return `NOTHING IN COMMON: the bundles share no case (${rates})`;
  if (counts.regressed > 0) {
    return `REGRESSED: ${counts.regressed} case(s) passed in base and fail in head, ${counts.fixed} fixed (${rates})`;
  }
  if (counts.fixed > 0) return `IMPROVED: ${counts.fixed} case(s) fixed, no regressions (${rates})`;
  return `NO REGRESSIONS: ${counts.common} common case(s), none went from passed to failed (${rates})`;
};

/**
 * Compares the latest rows of two bundles, matched by case key. `base` is held in memory (one small entry per
 * case); head rows are given one at a time, so a caller can feed them straight from the bundle reader, or from the
 * pass that summarises the head.
 */
export class HeadComparison implements RowVisitor {
  private readonly baseCases = new Map<string, { identity: CaseIdentity; side: CaseSide }>();
  private readonly baseRates = new Rates();
  private readonly headRates = new Rates();
  private readonly lists = {
    regressed: [] as CaseChange[],
    fixed: [] as CaseChange[],
    score_changed: [] as CaseChange[],
    outcome_changed: [] as CaseChange[],
    only_in_head: [] as CaseChange[],
  };
  private common = 0;
  private unchanged = 0;

  constructor(base: Iterable<IndexRow>) {
    for (const row of base) {
      this.baseCases.set(row.key, { identity: row.identity, side: { outcome: row.outcome, score: row.score } });
      this.baseRates.add(row.identity.target, row.outcome);
    }
  }

  visit(row: IndexRow): void {
    const { lists } = this;
    this.headRates.add(row.identity.target, row.outcome);
    const now: CaseSide = { outcome: row.outcome, score: row.score };
    const before = this.baseCases.get(row.key);
    const change: CaseChange = { key: row.key, identity: row.identity, base: before?.side ?? null, head: now };
    if (!before) {
      lists.only_in_head.push(change);
      return;
    }
    this.baseCases.delete(row.key);
    this.common++;
    const was = before.side.outcome;
    if (was === 'passed' && isBad(now.outcome)) lists.regressed.push(change);
    else if (isBad(was) && now.outcome === 'passed') lists.fixed.push(change);
    else if (was !== now.outcome) lists.outcome_changed.push(change);
    else if (scoreChanged(before.side.score, now.score)) lists.score_changed.push(change);
    else this.unchanged++;
  }

  /** The comparison once every head row was given; call it once. */
  result(names: { base: string; head: string }, tolerance = 0): Comparison {
    const { lists, baseRates, headRates } = this;
    // What is left of base is exactly the cases head does not have.
    const only_in_base = [...this.baseCases].map(
      ([key, c]): CaseChange => ({ key, identity: c.identity, base: c.side, head: null }),
    );
    const targetNames = [...new Set([...baseRates.byTarget.keys(), ...headRates.byTarget.keys()])].sort();
    const compared: Omit<Comparison, 'gate' | 'verdict'> = {
      schema: 'proctor.compare/1',
      base: names.base,
      head: names.head,
      targets: targetNames.map((t) => delta(t, baseRates.byTarget.get(t), headRates.byTarget.get(t))),
      overall: delta('all', baseRates.all, headRates.all),
      counts: {
        common: this.common,
        unchanged: this.unchanged,
        regressed: lists.regressed.length,
        fixed: lists.fixed.length,
        score_changed: lists.score_changed.length,
        outcome_changed: lists.outcome_changed.length,
        only_in_base: only_in_base.length,
        only_in_head: lists.only_in_head.length,
      },
      ...lists,
      only_in_base,
    };
    const result = { ...compared, gate: gateOf(compared, tolerance) };
    return { ...result, verdict: verdictOf(result) };
  }
}

/** Compares two bundles' latest rows, the head's consumed as they stream. */
export const compareRows = (
  names: { base: string; head: string },
  base: Iterable<IndexRow>,
  head: Iterable<IndexRow>,
  tolerance = 0,
): Comparison => {
  const comparison = new HeadComparison(base);
  for (const row of head) comparison.visit(row);
  return comparison.result(names, tolerance);
};
