// Whether V8 optimises a run's code, by the run's size. V8's flags are process-wide, so each case runs in a fresh
// Node process, started as bin/proctor.js starts a command (4× Node's budget, the optimising compiler on), its
// optimisations read with V8's natives syntax.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const module = fileURLToPath(new URL('../../src/cli/optimisation-budget.ts', import.meta.url));

/** Whether a small function called 20,000 times is optimised, after `setup` ran on an OptimisationBudget `budget`. */
const optimisedAfter = (setup: string): boolean => {
  const script = `
    import { setFlagsFromString } from 'node:v8';
    import { OptimisationBudget } from ${JSON.stringify(module)};
    setFlagsFromString('--interrupt-budget=270336');
    setFlagsFromString('--turbofan');
    ${setup}
    function work(x) { const a = x * 3 + 1; const b = (a % 7) + (a % 11) + (a % 13); return b > 10 ? a - b : a + b; }
    function drive(n) { let s = 0; for (let i = 0; i < n; i++) s += work(i); return s; }
    %NeverOptimizeFunction(drive);
    drive(20000);
    %WaitForBackgroundOptimization();
    work(1);
    console.log((%GetOptimizationStatus(work) & 16) !== 0);
  `;
  const child = spawnSync(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  expect(child.stderr).toBe('');
  return child.stdout.trim() === 'true';
};

describe('the optimisation budget of an eval run', () => {
  it('runs a short run without the optimising compiler; a long one with it', () => {
    expect(optimisedAfter('')).toBe(true);
    expect(optimisedAfter('new OptimisationBudget(false).start(5_000);')).toBe(false);
    expect(optimisedAfter('new OptimisationBudget(false).start(20_000);')).toBe(true);
  });

  it('turns it on once 10,000 tests have loaded, and keeps it for a run that reads an earlier bundle', () => {
    expect(
      optimisedAfter('const b = new OptimisationBudget(false); for (let i = 0; i < 9_999; i++) b.testLoaded();'),
    ).toBe(false);
    expect(
      optimisedAfter('const b = new OptimisationBudget(false); for (let i = 0; i < 10_000; i++) b.testLoaded();'),
    ).toBe(true);
    expect(optimisedAfter('new OptimisationBudget(true).start(5_000);')).toBe(true);
  });
});
