// V8's young generation is kept to a size through a long command. Its growth factor is process-wide and its size
// never shrinks back on its own, so each case runs in a fresh Node process.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const module = fileURLToPath(new URL('../../src/cli/young-generation.ts', import.meta.url));

/**
 * The young generation's largest size, in MB, over a synchronous stretch (a plan) and then an asynchronous one (a
 * run) that each keep objects alive across its collections; `held` says whether a YoungGeneration kept it.
 */
const youngMb = (held: boolean): number => {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { YoungGeneration } from ${JSON.stringify(module)};
    const size = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    let largest = 0;
    const young = ${held} ? new YoungGeneration() : undefined;
    const kept = [];
    const churn = (n) => {
      for (let i = 0; i < n; i++) {
        kept.push({ i, text: 'case ' + i });
        if (kept.length > 200_000) kept.splice(0, 100_000);
      }
      largest = Math.max(largest, size());
    };
    churn(1_000_000);
    young?.growTo(16 * 2 ** 20);
    for (let turn = 0; turn < 200; turn++) {
      churn(10_000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    young?.dispose();
    console.log(largest / 2 ** 20);
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  expect(child.stderr).toBe('');
  return Number(child.stdout.trim());
};

describe('the young generation of a long command', () => {
  it('stays at 16 MB through a synchronous stretch and the run after it; V8 alone grows it to 32 MB', () => {
    expect(youngMb(false)).toBe(32);
    expect(youngMb(true)).toBe(16);
  });
});
