import type { ErrorRecord } from '../errors.js';
import { extended } from '../extended.js';
import type { CaseIdentity, Outcome, Usage } from '../records.js';
import type { ResultAt } from './result-pack.js';

export const rowSchema = 'proctor.case/1';

/** A case execution as the engine knows it (camelCase). */
export interface CaseResult {
  identity: CaseIdentity;
  key: string;
  fingerprint: string;
  outcome: Outcome;
  score: number | null;
  error: ErrorRecord | null;
  attempts: number;
  durationMs: number;
  /** The target's calls. */
  usage: Usage;
  /** The judges' calls, kept apart from the target's spend. */
  judgeUsage?: Usage;
  runId: string;
  groupId: string;
  startedAt: number;
  finishedAt: number;
  /** Artifact files stored cut at the cap (each ends with a line saying so). */
  truncated?: string[];
  /** Bundle-relative folder of the artifacts, POSIX. */
  artifacts: string;
  /** Set on a row that graded a stored output again: where that output came from. */
  regrade?: RegradeSource;
}

/** The provenance of a regraded row: the bundle, run and artifacts of the output it graded. */
export interface RegradeSource {
  source_bundle: string;
  source_run: string;
  source_artifacts: string;
}

/** Usage as the bundle spells it. Optional token kinds appear only when the provider reported them. */
export interface UsageRow {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  reasoning_tokens?: number;
  /** Null when a billed model has no known price. */
  cost_usd: number | null;
}

export const toUsageRow = (u: Usage): UsageRow => ({
  input_tokens: u.inputTokens,
  output_tokens: u.outputTokens,
  ...(u.cacheReadTokens !== undefined ? { cache_read_tokens: u.cacheReadTokens } : {}),
  ...(u.cacheWriteTokens !== undefined ? { cache_write_tokens: u.cacheWriteTokens } : {}),
  ...(u.reasoningTokens !== undefined ? { reasoning_tokens: u.reasoningTokens } : {}),
  cost_usd: u.costUsd,
});

/** One line of index.jsonl. Field names are the bundle's contract: snake_case, read by jq and pandas. */
export interface IndexRow {
  schema: string;
  identity: CaseIdentity;
  key: string;
  fingerprint: string;
  outcome: Outcome;
  score: number | null;
  error: ErrorRecord | null;
  attempts: number;
  duration_ms: number;
  /** The target's usage; `judge` is the judges' (absent when no judge graded the case). */
  usage: UsageRow & { judge?: UsageRow };
  run_id: string;
  group_id: string;
  started_at: string;
  finished_at: string;
  truncated?: string[];
  /**
   * Last but for `result_at`: the bundle's fast reader knows a complete row by this field closing it. The case's
   * folder; a packed case (result_at) has none.
   */
  artifacts: string;
  regrade?: RegradeSource;
  /** Where the case's result.json is in results.jsonl, when it is packed there (result-pack.ts): spliced in last. */
  result_at?: ResultAt;
}

export const toIndexRow = (r: CaseResult): IndexRow => ({
  schema: rowSchema,
  identity: r.identity,
  key: r.key,
  fingerprint: r.fingerprint,
  outcome: r.outcome,
  score: r.score,
  error: r.error,
  attempts: r.attempts,
  duration_ms: r.durationMs,
  usage: r.judgeUsage ? extended(toUsageRow(r.usage), { judge: toUsageRow(r.judgeUsage) }) : toUsageRow(r.usage),
  run_id: r.runId,
  group_id: r.groupId,
  started_at: new Date(r.startedAt).toISOString(),
  finished_at: new Date(r.finishedAt).toISOString(),
  ...(r.truncated ? { truncated: r.truncated } : {}),
  artifacts: r.artifacts,
  ...(r.regrade ? { regrade: r.regrade } : {}),
});

/** A line of index.jsonl as a row, or undefined when it is not one (not JSON, or torn by a crash mid-write). */
export const parseRow = (line: string): IndexRow | undefined => {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const row = value as IndexRow;
  if (typeof value !== 'object' || value === null || typeof row.key !== 'string' || typeof row.outcome !== 'string')
    return undefined;
  // Every row this version writes has its usage; one edited by hand or written by another tool may not, and
  // counts as spending what is unknown rather than failing every reader that adds it up.
  if (typeof row.usage !== 'object' || row.usage === null)
    row.usage = { input_tokens: 0, output_tokens: 0, cost_usd: null };
  return row;
};
