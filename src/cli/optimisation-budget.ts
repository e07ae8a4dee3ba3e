import { setFlagsFromString } from 'node:v8';

/** Below this many cases (or tests loaded) a run's code is not called often enough to repay optimising it. */
const shortRunCases = 10_000;

const turbofan = (on: boolean): void => setFlagsFromString(on ? '--turbofan' : '--no-turbofan');

/**
 * Whether V8 optimises an eval run's code, by the run's size. A short run's code is called about once per test and
 * case: what V8's optimising compiler (TurboFan) compiles, on threads whose CPU the run pays for, mostly never
 * repays its compile. So a run starts without it, in V8's interpreter and baseline code, and a large one turns it
 * on: once 10,000 tests have loaded (a 100,000-test plan loaded without it took ~30% longer), or when it starts with
 * 10,000 cases or more. bin/proctor.js turns it back on at exit (its start flags), so the command's code cache is
 * made under the flags every command starts with.
 * bench/suite's 5,000 cases -j 50, alternated pairs against it on throughout: 3.4% less CPU (median ratio 0.966,
 * 8 pairs), peak RSS 131 -> 120 MB; valgrind 1,000 cases 2.915 -> 2.884 G. Without it, how much bytecode a function
 * runs before V8 tiers it up hardly matters (5,000 cases, 16× Node's budget against bin's 4×: 9.955 and 9.970 G).
 * Checked again on a slower machine (bench/ab.ts): on from 3,000 cases, 11% more CPU at 5,000 (8 pairs); never on,
 * 15% more at 20,000 (4 pairs).
 */
export class OptimisationBudget {
  private tests = 0;

  /**
   * `readsOtherBundle`: the run reads a bundle besides its own rows, a loop over every row that bundle holds, which
   * may be any size: an earlier run's index (--resume, --rerun-failed: bench/rerun-plan.ts's 1,000,000 rows took
   * 10-15% more CPU without it), a base to compare with (--compare: 1,000 cases against 100,000 rows, 1.5-1.7 s of CPU
   * with it, 2.3-2.5 without), or the rows already in the folder it writes (--output). It keeps the compiler.
   */
  constructor(readsOtherBundle: boolean) {
    if (!readsOtherBundle) turbofan(false);
  }

  /** One more test loaded: a plan this large repays optimising its loading code. */
  readonly testLoaded = (): void => {
    if (++this.tests === shortRunCases) turbofan(true);
  };

  /** The run starts with `cases` cases. */
  start(cases: number): void {
    if (cases >= shortRunCases) turbofan(true);
  }
}
