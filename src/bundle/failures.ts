import { readCaseDetail } from './case-detail.js';
import type { IndexRow } from './row.js';
import type { RowVisitor } from './row-visitor.js';

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

/** The first `cap` failed and errored cases (latest row per case), in the order they were written. */
export class FailureList implements RowVisitor {
  readonly rows: IndexRow[] = [];

  constructor(private readonly cap: number) {}

  visit(row: IndexRow): void {
    if (this.rows.length < this.cap && (row.outcome === 'failed' || row.outcome === 'error')) this.rows.push(row);
  }

  /** The first `count` of them with why each did not pass, read from its artifacts only now. */
  failures(dir: string, count = this.cap): Failure[] {
    return this.rows.slice(0, count).map((row) => ({ row, reason: failureReason(dir, row) }));
  }
}
