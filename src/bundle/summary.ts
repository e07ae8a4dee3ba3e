import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Outcome } from '../records.js';
import { writeFileAtomic } from './atomic.js';
import { readLatest, rowsOf } from './latest-rows.js';
import type { IndexRow, UsageRow } from './row.js';
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

/** A sum of usages; its cost is null when one part's is (an unpriced model), since a partial sum would mislead. */
const sumUsage = (usages: readonly (UsageRow | undefined)[]): UsageRow => {
  const out: UsageRow = { input_tokens: 0, output_tokens: 0, cost_usd: 0 };
  for (const u of usages) {
    if (!u) continue;
    out.input_tokens += u.input_tokens;
    out.output_tokens += u.output_tokens;
    for (const k of tokenKinds) if (u[k] !== undefined) out[k] = (out[k] ?? 0) + (u[k] as number);
    // Rows written before costs could be unknown hold a number; `?? null` reads a missing one as unknown.
    out.cost_usd =
      out.cost_usd === null || (u.cost_usd ?? null) === null ? null : out.cost_usd + (u.cost_usd as number);
  }
  return out;
};

const targetUsage = (rows: readonly IndexRow[]): UsageRow => sumUsage(rows.map((r) => r.usage));
const judgeUsage = (rows: readonly IndexRow[]): UsageRow => sumUsage(rows.map((r) => r.usage.judge));

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

const budgetOf = (latest: readonly IndexRow[], spend: BudgetSpend | undefined): BudgetSummary | undefined => {
  const notStarted = latest.filter((r) => r.error?.kind === 'budget_exceeded').length;
  if (!spend && notStarted === 0) return undefined;
  return { ...spend, exhausted: notStarted > 0, not_started: notStarted };
};

export const buildSummary = (runId: string, digest: IndexDigest, spend?: BudgetSpend): Summary => {
  const latest = [...digest.latest.values()];
  const budget = budgetOf(latest, spend);
  const counts = emptyCounts();
  const byTarget = new Map<string, IndexRow[]>();
  for (const row of latest) {
    count(counts, row.outcome);
    const list = byTarget.get(row.identity.target) ?? [];
    list.push(row);
    byTarget.set(row.identity.target, list);
  }
  finishRate(counts);
  const targets = [...byTarget.entries()].map(([target, list]): TargetSummary => {
    const tc = emptyCounts();
    for (const row of list) count(tc, row.outcome);
    finishRate(tc);
    const scored = list.filter((r) => r.score !== null);
    return {
      target,
      ...tc,
      mean_score: scored.length ? scored.reduce((a, r) => a + (r.score as number), 0) / scored.length : null,
      duration_ms: durations(list.map((r) => r.duration_ms)),
      usage: targetUsage(list),
      judge_usage: judgeUsage(list),
    };
  });
  const latestGroups = new Set(latest.map((r) => r.group_id));
  return {
    schema: 'proctor.summary/1',
    run_id: runId,
    updated_at: new Date().toISOString(),
    counts,
    targets,
    usage: targetUsage(latest),
    judge_usage: judgeUsage(latest),
    duration_ms: durations(latest.map((r) => r.duration_ms)),
    groups: digest.groups,
    mixed: latestGroups.size > 1 || digest.drifted,
    skipped_lines: digest.skippedLines,
    ...(budget ? { budget } : {}),
  };
};

/** Rebuilds summary.json from the bundle's index (with the spend of a budget it ran under) and writes it atomically. */
export const writeSummary = (dir: string, runId: string, spend?: BudgetSpend): Summary => {
  const summary = buildSummary(runId, digestIndex(dir), spend);
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(join(dir, summaryFile), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
};

export const readSummary = (dir: string): Summary | undefined => {
  const file = join(dir, summaryFile);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Summary) : undefined;
};
