import { z } from 'zod';
import type { GradeResult } from './grader.js';

/** `samples: N` on a judged assertion: the judge is asked N times and the verdicts are combined. */
export const samplesKey = () =>
  z
    .int()
    .min(1)
    .max(10)
    .optional()
    .describe('Ask the judge this many times and combine the verdicts: a majority, the commonest letter, a mean');

/**
 * Runs `ask` `samples` times at once (each a full ask, with its repair); every call is kept by the asks. One that
 * fails fails the grading, but only once all have ended: an ask still running would be spend no record counts.
 */
export const askSamples = async <T>(samples: number | undefined, ask: () => Promise<T>): Promise<T[]> => {
  const settled = await Promise.allSettled(Array.from({ length: samples ?? 1 }, ask));
  const values: T[] = [];
  for (const s of settled) {
    if (s.status === 'rejected') throw s.reason;
    values.push(s.value);
  }
  return values;
};

/** The mean of sampled scores. */
export const meanScore = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/** `{pass, score, reason}` verdicts as one: passes when most passed (a tie does not), scored by their mean. */
export const majorityVerdict = (verdicts: readonly Omit<GradeResult, 'judgeCalls'>[]): GradeResult => {
  const [only] = verdicts;
  if (verdicts.length === 1 && only) return only;
  const passes = verdicts.filter((v) => v.pass).length;
  return {
    pass: passes * 2 > verdicts.length,
    score: meanScore(verdicts.map((v) => v.score)),
    reason: `${passes} of ${verdicts.length} passed: ${verdicts.map((v) => v.reason).join(' | ')}`,
  };
};

/** The letter most verdicts chose; a tie goes to the lowest-scoring of the tied, so a split judge is no pass. */
export const commonestChoice = (
  choices: readonly string[],
  scoreOf: (choice: string) => number,
): { choice: string; votes: string } => {
  const counts = new Map<string, number>();
  for (const c of choices) counts.set(c, (counts.get(c) ?? 0) + 1);
  const [choice] = [...counts.entries()].sort((a, b) => b[1] - a[1] || scoreOf(a[0]) - scoreOf(b[0]))[0] ?? [''];
  return { choice, votes: choices.join(', ') };
};
