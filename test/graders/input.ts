import type { GradeInput, GradeResult, Grader } from '../../src/graders/grader.js';

/** A case as graders see it, with the parts a test does not care about filled in. */
export const anInput = (output: string, overrides: Partial<GradeInput> = {}): GradeInput => ({
  output,
  prompt: 'Say hello',
  vars: {},
  test: 't1',
  target: 'echo',
  usage: { inputTokens: 3, outputTokens: 5, costUsd: 0.001 },
  durationMs: 12,
  ...overrides,
});

export const neverAborted = new AbortController().signal;

/** Grades synchronously: the deterministic graders must not return a promise. */
export const gradeSync = (grade: Grader, output: string): GradeResult => {
  const result = grade(anInput(output), neverAborted);
  if (result instanceof Promise) throw new Error('expected a synchronous result');
  return result;
};
