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

/** What a pass rule makes of a bundle's cases: how many pass, per target and in all, and which are flaky. */
export interface RepeatVerdict {
  byTarget: Map<string, { passed: number; total: number }>;
  passed: number;
  total: number;
  /** Some case has more than one sample. */
  repeated: boolean;
  /** The cases whose samples disagree, in first-seen order. */
  flaky: RepeatedCase[];
}

/**
 * The latest rows grouped by case (identity without its sample), in first-seen order: per case two counts, its
 * target and the sample of its first row, whatever the rule that judges it later. Every case of a run passes
 * through it, so it keeps no row and no object per case, only numbers and each case's key: ~180 B a case
 * (test/bundle/repeats.test.ts), where an object per case holding its first row's identity took ~205, and judging
 * copied every one of them again.
 */
export class RepeatTally implements RowVisitor {
  /** Each case's number by its key (its identity without the sample, as JSON), numbered as first seen. */
  private readonly numbers = new Map<string, number>();
  private readonly samples: number[] = [];
  private readonly passed: number[] = [];
  private readonly firstSample: number[] = [];
  /** Each case's target, as its place in `targets`. */
  private readonly targetOf: number[] = [];
  private readonly targets: string[] = [];

  visit(row: IndexRow): void {
    const { eval: path, test, prompt, target, sample } = row.identity;
    const key = JSON.stringify([path, test, prompt, target]);
    let n = this.numbers.get(key);
    if (n === undefined) {
      n = this.samples.length;
      this.numbers.set(key, n);
      this.samples.push(0);
      this.passed.push(0);
      this.firstSample.push(sample);
      let t = this.targets.indexOf(target);
      if (t === -1) t = this.targets.push(target) - 1;
      this.targetOf.push(t);
    }
    this.samples[n] = (this.samples[n] as number) + 1;
    if (row.outcome === 'passed') this.passed[n] = (this.passed[n] as number) + 1;
  }

  /** The cases judged by `rule`; targets in the order of their first case. */
  judge(rule: PassRule): RepeatVerdict {
    const verdict: RepeatVerdict = { byTarget: new Map(), passed: 0, total: 0, repeated: false, flaky: [] };
    for (const [key, n] of this.numbers) {
      const samples = this.samples[n] as number;
      const passed = this.passed[n] as number;
      const pass = passes(rule, passed, samples);
      const target = this.targets[this.targetOf[n] as number] as string;
      let count = verdict.byTarget.get(target);
      if (!count) {
        count = { passed: 0, total: 0 };
        verdict.byTarget.set(target, count);
      }
      count.total++;
      verdict.total++;
      if (pass) {
        count.passed++;
        verdict.passed++;
      }
      if (samples > 1) verdict.repeated = true;
      if (passed > 0 && passed < samples) {
        // Its identity again from its key, for the few cases listed.
        const [path, test, prompt] = JSON.parse(key) as [string, string, string];
        const identity: CaseIdentity = { eval: path, test, prompt, target, sample: this.firstSample[n] as number };
        verdict.flaky.push({ identity, samples, passed, pass, flaky: true });
      }
    }
    return verdict;
  }
}
