import { ProctorError } from '../errors.js';
import type { GradeResult } from './grader.js';

/** An object that user code (a javascript function, a script's stdout) meant as `{pass, score, reason}`. */
export const isVerdictObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && ('pass' in value || 'score' in value);

const clamp = (score: number): number => Math.min(1, Math.max(0, score));

const checkScore = (score: number, source: string): number => {
  if (!Number.isFinite(score)) throw new ProctorError('grader_error', `${source} returned a score of ${score}`);
  return clamp(score);
};

/**
 * Reads what user code returned: a boolean (score 1 or 0), a number (a score; passes at 1, or at the
 * assertion's threshold, applied by the caller), or `{pass, score, reason}` with any part left out.
 * Anything else means the code could not grade, so it is a grader_error rather than a silent fail.
 */
export const readVerdict = (value: unknown, source: string): GradeResult => {
  if (typeof value === 'boolean') return { pass: value, score: value ? 1 : 0, reason: `${source} returned ${value}` };
  if (typeof value === 'number') {
    const score = checkScore(value, source);
    return { pass: score >= 1, score, reason: `${source} returned a score of ${value}` };
  }
  if (isVerdictObject(value)) {
    const { pass, score, reason } = value;
    if (pass !== undefined && typeof pass !== 'boolean') {
      throw new ProctorError('grader_error', `${source} returned a non-boolean pass: ${JSON.stringify(pass)}`);
    }
    if (score !== undefined && typeof score !== 'number') {
      throw new ProctorError('grader_error', `${source} returned a non-numeric score: ${JSON.stringify(score)}`);
    }
    const finalScore = score === undefined ? (pass ? 1 : 0) : checkScore(score, source);
    const finalPass = pass ?? finalScore >= 1;
    const text = typeof reason === 'string' && reason !== '' ? reason : `${source} returned pass=${finalPass}`;
    return { pass: finalPass, score: finalScore, reason: text };
  }
  const shown = value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  throw new ProctorError(
    'grader_error',
    `${source} returned ${shown.slice(0, 80)}; expected a boolean, a number or {pass, score, reason}`,
  );
};
