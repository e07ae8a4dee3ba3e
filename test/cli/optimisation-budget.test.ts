// How soon V8 optimises a run's code, by the run's size. The budget is process-wide, so each case runs in a fresh
// Node process, started as bin/proctor.js starts a command (4× Node's budget), its optimisations read with V8's
// natives syntax.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const module = fileURLToPath(new URL('../../src/cli/optimisation-budget.ts', import.meta.url));

/** Whether a small function called `calls` times, in a run of `cases` cases, is optimised by then. */
const optimisedAfter = (cases: number, calls: number): boolean => {
  const script = `
    import { setFlagsFromString } from 'node:v8';
    import { budgetOptimisation } from ${JSON.stringify(module)};
    setFlagsFromString('--interrupt-budget=270336');
    budgetOptimisation(${cases});
    function work(x) { const a = x * 3 + 1; const b = (a % 7) + (a % 11) + (a % 13); return b > 10 ? a - b : a + b; }
    function drive(n) { let s = 0; for (let i = 0; i < n; i++) s += work(i); return s; }
    %NeverOptimizeFunction(drive);
    drive(${calls});
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

describe('the optimisation budget of a run', () => {
  it('a short run optimises its code later; a long one as every command does', () => {
    expect(optimisedAfter(20_000, 12_000)).toBe(true);
    expect(optimisedAfter(5_000, 12_000)).toBe(false);
    // Later, not never: code that keeps running is optimised.
    expect(optimisedAfter(5_000, 64_000)).toBe(true);
  });
});
