import { readResultText } from './case-files.js';
import type { IndexRow } from './row.js';

/** One grader's verdict on a case, as its `result.json` recorded it. */
export interface GraderReason {
  id: string;
  pass: boolean;
  score: number | null;
  reason: string;
}

/** What a case's artifacts add to its row: the target's output and why the graders decided as they did. */
export interface CaseDetail {
  output: string | undefined;
  reasons: GraderReason[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

const toReason = (value: unknown): GraderReason | undefined => {
  if (!isObject(value) || typeof value.reason !== 'string') return undefined;
  return {
    id: typeof value.id === 'string' ? value.id : '',
    pass: value.pass === true,
    score: typeof value.score === 'number' ? value.score : null,
    reason: value.reason,
  };
};

/** The grader results of every step that graded (a verify step's output holds `results`). */
export const reasonsOf = (steps: unknown): GraderReason[] => {
  if (!Array.isArray(steps)) return [];
  return steps.flatMap((step: unknown) => {
    const results = isObject(step) && isObject(step.output) ? step.output.results : undefined;
    return Array.isArray(results) ? results.flatMap((r) => toReason(r) ?? []) : [];
  });
};

const none: CaseDetail = { output: undefined, reasons: [] };

/**
 * Reads `result.json` of a row's case (readResultText). A bundle may come from anywhere (CI, another machine), so
 * missing, unreadable or unexpected content gives no detail rather than failing an export.
 */
export const readCaseDetail = (dir: string, row: IndexRow): CaseDetail => {
  const text = readResultText(dir, row);
  return text === undefined ? none : parseCaseDetail(text);
};

/** The detail a parsed `result.json` holds; none when it is not what the engine writes. */
export const caseDetailOf = (value: unknown): CaseDetail =>
  isObject(value)
    ? { output: typeof value.output === 'string' ? value.output : undefined, reasons: reasonsOf(value.steps) }
    : none;

/** The detail a `result.json` text holds; none when it is not the JSON the engine writes. */
export const parseCaseDetail = (text: string): CaseDetail => {
  try {
    return caseDetailOf(JSON.parse(text));
  } catch {
    return none;
  }
};
