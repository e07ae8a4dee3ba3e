import { readCaseDetail } from './case-detail.js';
import { latestRows } from './latest-rows.js';
import type { IndexRow } from './row.js';

/** A failing or erroring case and, in one line, why: the failed grader's reason or the error. */
export interface Failure {
  row: IndexRow;
  reason: string;
}

const firstLine = (text: string, max = 200): string => {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** Why a case did not pass, read from its row and its result.json. */
export const failureReason = (dir: string, row: IndexRow): string => {
  if (row.error) return firstLine(`${row.error.kind}: ${row.error.message}`);
  const failed = readCaseDetail(dir, row).reasons.find((r) => !r.pass);
  return failed ? firstLine(`${failed.id ? `${failed.id}: ` : ''}${failed.reason}`) : 'graded below its threshold';
};

/** The bundle's failed and errored cases (latest row per case), in the order they were written. */
export function* failures(dir: string): Generator<Failure> {
  for (const row of latestRows(dir).rows) {
    if (row.outcome === 'failed' || row.outcome === 'error') yield { row, reason: failureReason(dir, row) };
  }
}
