import { setFlagsFromString } from 'node:v8';

/** Below this many cases a run's code is not called often enough to repay optimising it early. */
const shortRunCases = 10_000;

/**
 * Sets how much bytecode a function runs before V8 optimises it, for a run of `cases` cases. bin/proctor.js starts
 * every command at 4× Node's budget. A run's per-case code is called about once per case: in a short run, much of
 * what V8 optimises at that budget never repays its compile. At 16× from the run's start, valgrind counted 5.9%
 * fewer instructions at 5,000 cases (12.94 → 12.18 G) and 1.4% fewer at 1,000; at 20,000 cases 16× throughout
 * cost 8% more (38.6 → 41.7 G), so a long run keeps 4×.
 */
export const budgetOptimisation = (cases: number): void => {
  if (cases < shortRunCases) setFlagsFromString('--interrupt-budget=1081344');
};
