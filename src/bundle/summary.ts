import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Outcome } from '../records.js';
import { writeFileAtomic } from './atomic.js';
import { readLatest, rowsOf } from './latest-rows.js';
import type { IndexRow, UsageRow } from './row.js';
import { type IndexFacts, type RowVisitor, visitLatest } from './row-visitor.js';
import { summaryFile } from './writer.js';

export interface OutcomeCounts {
  total: number;
  passed: number;
  failed: number;
  error: number;
  canceled: number;
  pass_rate: number;
}

export interface TargetSummary extends OutcomeCounts {
  target: string;
  mean_score: number | null;
  duration_ms: { mean: number; p50: number; p95: number };
  usage: UsageRow;
  /** What judges spent grading this target's cases: apart from the target's own spend. */
  judge_usage: UsageRow;
}

/** What a command under a budget spent: `--budget-usd` or `[defaults] budget_usd`. */
export interface BudgetSpend {
  limit_usd: number;
  /** Target and judge spend of the command's cases, settled from their committed rows. */
  spent_usd: number;
  /** The most it had spent and reserved for cases in flight at once: never above the limit. */
  reserved_peak_usd: number;
}

/**
 * The budget's account. `not_started` and `exhausted` come from the rows (cases whose latest row is an error of
 * kind budget_exceeded), so a summary rebuilt later still says it; the spend only the command that had it knows.
 */
export interface BudgetSummary extends Partial<BudgetSpend> {
  exhausted: boolean;
  not_started: number;
}

/** summary.json: always rebuilt from the latest row per key, so it is right after any mix of runs and reruns. */
export interface Summary {
  schema: string;
  run_id: string;
  updated_at: string;
  counts: OutcomeCounts;
  targets: TargetSummary[];
  usage: UsageRow;
  judge_usage: UsageRow;
  duration_ms: { mean: number; p50: number; p95: number };
  /** Groups (commands) whose rows are the latest of some case, in the order those rows were written. */
  groups: string[];
  /** True when the latest rows come from more than one group or their fingerprints drifted. */
  mixed: boolean;
  /** Lines of index.jsonl that are not complete rows (a torn write after a crash): never counted. */
  skipped_lines: number;
  /** Present when the command that wrote it had a budget, or when cases were never started for one. */
  budget?: BudgetSummary;
}

const emptyCounts = (): OutcomeCounts => ({ total: 0, passed: 0, failed: 0, error: 0, canceled: 0, pass_rate: 0 });

const count = (counts: OutcomeCounts, outcome: Outcome): void => {
  counts.total++;
  counts[outcome]++;
};

const finishRate = (counts: OutcomeCounts): void => {
  counts.pass_rate = counts.total === 0 ? 0 : counts.passed / counts.total;
};

const percentile = (sorted: readonly number[], p: number): number =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number);

const durations = (values: number[]) => {
  values.sort((a, b) => a - b);
  const mean = values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
  return { mean: Math.round(mean), p50: percentile(values, 0.5), p95: percentile(values, 0.95) };
};

const tokenKinds = ['cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens'] as const;

const zeroUsageRow = (): UsageRow => ({ input_tokens: 0, output_tokens: 0, cost_usd: 0 });

/** Adds a usage to a sum; the cost turns null once one part's is (an unpriced model): a partial sum would mislead. */
const addUsageRow = (out: UsageRow, u: UsageRow | undefined): void => {
  if (!u) return;
  out.input_tokens += u.input_tokens;
  out.output_tokens += u.output_tokens;
  for (const k of tokenKinds) if (u[k] !== undefined) out[k] = (out[k] ?? 0) + (u[k] as number);
  // Rows written before costs could be unknown hold a number; `?? null` reads a missing one as unknown.
  out.cost_usd = out.cost_usd === null || (u.cost_usd ?? null) === null ? null : out.cost_usd + (u.cost_usd as number);
};

/** What the summary keeps of a set of rows, added one at a time: counts, scores, durations and spend. */
interface Tally {
  counts: OutcomeCounts;
  scoreSum: number;
  scored: number;
  durations: number[];
  usage: UsageRow;
  judgeUsage: UsageRow;
  /** Cases never started because a budget ran out. */
  notStarted: number;
}

const emptyTally = (): Tally => ({
  counts: emptyCounts(),
  scoreSum: 0,
  scored: 0,
  durations: [],
  usage: zeroUsageRow(),
  judgeUsage: zeroUsageRow(),
  notStarted: 0,
});

const tallyRow = (t: Tally, row: IndexRow): void => {
  count(t.counts, row.outcome);
  if (row.score !== null) {
    t.scoreSum += row.score;
    t.scored++;
  }
  t.durations.push(row.duration_ms);
  addUsageRow(t.usage, row.usage);
  addUsageRow(t.judgeUsage, row.usage.judge);
  if (row.error?.kind === 'budget_exceeded') t.notStarted++;
};

const budgetOf = (notStarted: number, spend: BudgetSpend | undefined): BudgetSummary | undefined =>
  !spend && notStarted === 0 ? undefined : { ...spend, exhausted: notStarted > 0, not_started: notStarted };

/** A spend for people: `?` when unknown (an unpriced model), never 0; `-` when a summary predates it. */
export const formatUsd = (usage: { cost_usd: number | null } | undefined): string =>
  usage === undefined ? '-' : usage.cost_usd === null ? '?' : usage.cost_usd.toFixed(4);

/** What a pass over index.jsonl keeps: the latest row per key, and enough to tell a mixed bundle. */
export interface IndexDigest {
  latest: Map<string, IndexRow>;
  groups: string[];
  drifted: boolean;
  skippedLines: number;
}

/** The latest row of each key parsed (memory and time grow with the bundle's cases, not its reruns). */
export const digestIndex = (dir: string): IndexDigest => {
  const index = readLatest(dir);
  const latest = new Map<string, IndexRow>();
  const groups = new Set<string>();
  for (const row of rowsOf(dir, index.latest.values())) {
    latest.set(row.key, row);
    groups.add(row.group_id);
  }
  return { latest, groups: [...groups], drifted: index.drifted, skippedLines: index.skipped.length };
};

/**
 * The summary of the latest rows, given one at a time in the order they were written: what it keeps per row is a
 * duration, so a 100,000-case bundle is summarised without holding its rows.
 */
export class SummaryTally implements RowVisitor {
  private readonly all = emptyTally();
  private readonly byTarget = new Map<string, Tally>();
  private readonly groups = new Set<string>();

  visit(row: IndexRow): void {
    tallyRow(this.all, row);
    let target = this.byTarget.get(row.identity.target);
    if (!target) {
      target = emptyTally();
      this.byTarget.set(row.identity.target, target);
    }
    tallyRow(target, row);
    this.groups.add(row.group_id);
  }

  summary(runId: string, index: IndexFacts, spend?: BudgetSpend): Summary {
    const { all, groups } = this;
    finishRate(all.counts);
    const budget = budgetOf(all.notStarted, spend);
    const targets = [...this.byTarget.entries()].map(([target, t]): TargetSummary => {
      finishRate(t.counts);
      return {
        target,
        ...t.counts,
        mean_score: t.scored ? t.scoreSum / t.scored : null,
        duration_ms: durations(t.durations),
        usage: t.usage,
        judge_usage: t.judgeUsage,
      };
    });
    return {
      schema: 'proctor.summary/1',
      run_id: runId,
      updated_at: new Date().toISOString(),
      counts: all.counts,
      targets,
      usage: all.usage,
      judge_usage: all.judgeUsage,
      duration_ms: durations(all.durations),
      groups: [...groups],
      mixed: groups.size > 1 || index.drifted,
      skipped_lines: index.skippedLines,
      ...(budget ? { budget } : {}),
    };
  }
}

export const buildSummary = (runId: string, digest: IndexDigest, spend?: BudgetSpend): Summary => {
  const tally = new SummaryTally();
  for (const row of digest.latest.values()) tally.visit(row);
  return tally.summary(runId, digest, spend);
};

/** Writes summary.json atomically. */
export const saveSummary = (dir: string, summary: Summary): Summary => {
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(join(dir, summaryFile), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
};

/**
 * Rebuilds summary.json from the bundle's index (with the spend of a budget it ran under) and writes it atomically.
 * `visitors` are given the same rows in the same pass: the end of a run reads its index once.
 */
export const writeSummary = (
  dir: string,
  runId: string,
  spend?: BudgetSpend,
  visitors: readonly RowVisitor[] = [],
): Summary => {
  const tally = new SummaryTally();
  return saveSummary(dir, tally.summary(runId, visitLatest(dir, [tally, ...visitors]), spend));
};

export const readSummary = (dir: string): Summary | undefined => {
  const file = join(dir, summaryFile);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Summary) : undefined;
};
