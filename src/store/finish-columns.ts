import type { JsonObject } from '../records.js';
import type { RunFinish } from './store.js';

/** The `runs` columns a terminal status sets: one mapping for every statement that ends a run. */
export const finishColumns = (finish: RunFinish, now: number) => ({
  status: finish.status,
  outcome: finish.outcome ?? null,
  score: finish.score ?? null,
  errorKind: finish.error?.kind ?? null,
  errorMessage: finish.error?.message ?? null,
  errorRetryable: finish.error ? (finish.error.retryable ? 1 : 0) : null,
  finishedAt: now,
});

/** The error kind of an index row, for the results table's filter column. */
export const errorKindOf = (row: JsonObject): string | null => {
  const error = row.error;
  return typeof error === 'object' && error !== null && !Array.isArray(error) && typeof error.kind === 'string'
    ? error.kind
    : null;
};
