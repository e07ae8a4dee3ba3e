import type { ErrorRecord } from '../errors.js';
import type { CaseIdentity, Outcome, Usage } from '../records.js';

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
  usage: Usage;
  runId: string;
  groupId: string;
  startedAt: number;
  finishedAt: number;
  /** Artifact files stored cut at the cap (each ends with a line saying so). */
  truncated?: string[];
  /** Bundle-relative folder of the artifacts, POSIX. */
  artifacts: string;
}

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
  usage: { input_tokens: number; output_tokens: number; cost_usd: number };
  run_id: string;
  group_id: string;
  started_at: string;
  finished_at: string;
  truncated?: string[];
  /** Last: the bundle's fast reader knows a complete row by this field closing it. */
  artifacts: string;
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
  usage: { input_tokens: r.usage.inputTokens, output_tokens: r.usage.outputTokens, cost_usd: r.usage.costUsd },
  run_id: r.runId,
  group_id: r.groupId,
  started_at: new Date(r.startedAt).toISOString(),
  finished_at: new Date(r.finishedAt).toISOString(),
  ...(r.truncated ? { truncated: r.truncated } : {}),
  artifacts: r.artifacts,
});

/** A line of index.jsonl as a row, or undefined when it is not one (not JSON, or torn by a crash mid-write). */
export const parseRow = (line: string): IndexRow | undefined => {
  try {
    const value: unknown = JSON.parse(line);
    const row = value as IndexRow;
    return typeof value === 'object' && value !== null && typeof row.key === 'string' && typeof row.outcome === 'string'
      ? row
      : undefined;
  } catch {
    return undefined;
  }
};
