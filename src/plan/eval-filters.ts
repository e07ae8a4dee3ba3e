import { InputError } from '../errors.js';
import { parseAssignments } from './seeds.js';
import type { EvalSpec } from './spec.js';

/** The part of a suite one command runs, and vars it sets: promptfoo's `--filter-*`, `-n` and `--var`. */
export interface EvalFilters {
  /** A regular expression a test's description (else its id) must match. */
  filterPattern?: string;
  /** A regular expression a target's label must match. */
  filterTargets?: string;
  /** Only the first N tests of each eval file (after the pattern). */
  first?: number;
  /** `key=value`: set in every test's vars, over what the test gives. */
  var?: readonly string[];
}

/** A `--filter-*` flag's regular expression; an invalid one is bad input naming the flag. */
export const filterRegex = (flag: string, source: string): RegExp => {
  try {
    return new RegExp(source);
  } catch (error) {
    throw new InputError(
      `${flag} "${source}" is not a valid regular expression: ${(error as Error).message}`,
      undefined,
      'write a JavaScript regular expression, e.g. "^refund" or "gpt|claude"',
    );
  }
};

/** The vars `--var` sets in every test, over what the test gives: each test is loaded with them. */
export const givenVars = (filters: EvalFilters): Record<string, string> => parseAssignments('--var', filters.var ?? []);

/**
 * Narrows the loaded evals to what the flags select, before the matrix is expanded. A filter that leaves
 * nothing is bad input: a typo would otherwise run an empty suite and pass.
 */
export const applyEvalFilters = (evals: readonly EvalSpec[], filters: EvalFilters): EvalSpec[] => {
  const { filterPattern, filterTargets, first } = filters;
  if (filterPattern === undefined && filterTargets === undefined && first === undefined) return [...evals];
  const pattern = filterPattern === undefined ? undefined : filterRegex('--filter-pattern', filterPattern);
  const targets = filterTargets === undefined ? undefined : filterRegex('--filter-targets', filterTargets);
  const narrowed = evals.map((spec) => ({
    ...spec,
    targets: spec.targets.filter((t) => !targets || targets.test(t.label)),
    tests: spec.tests.filter((t) => !pattern || pattern.test(t.description ?? t.id)).slice(0, first),
  }));
  if (pattern && narrowed.every((spec) => spec.tests.length === 0)) {
    throw new InputError(
      `--filter-pattern "${filterPattern}" selects no test`,
      undefined,
      'check the pattern against the tests’ descriptions and ids',
    );
  }
  if (targets && narrowed.every((spec) => spec.targets.length === 0)) {
    throw new InputError(
      `--filter-targets "${filterTargets}" selects no target`,
      undefined,
      'check the pattern against the targets’ labels',
    );
  }
  return narrowed;
};
