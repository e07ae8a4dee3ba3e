// Two builds of Proctor on the same suite, side by side (issue: performance): does a change cost less CPU or wall?
//   npx tsx bench/ab.ts --cli <checkout>/bin/proctor.js --cli <other>/bin/proctor.js [--cases 5000] [--concurrency 50]
//   [--pairs 8] [--latency-ms 50] [--dir DIR] [--instructions]
// The first CLI is A, the second B, each of a checkout (or a copy of one) after `npm run build`: each runs `eval run
// -j J` on bench/suite's suite (suite-shape.ts) of N tests, against one fake model server. On a shared machine one
// build's runs spread by ±15% within minutes, more than most changes move them; so the builds run in alternated pairs
// (A B, then B A, ...), each run in the same project with its store and bundle removed, and the figure is the median
// of the pairs' B/A ratios, each taken a few seconds apart, not a ratio of two medians taken minutes apart. Each build
// first makes its own `eval run` code cache with a one-case run (bin/proctor.js), as a user's every run but the first
// finds it. B may be bench/floor-eval.js, the least a durable eval of the suite costs: B/A is then that floor's share.
// --instructions counts each run's instructions with valgrind instead (support.ts countInstructions): the count of
// one build moves by ~1% between runs, so 2 to 4 pairs tell a 2% change apart, which CPU time on a shared machine
// (one build's runs spread by 15% and more) does not in 30. Instructions are not time: a change in system calls,
// page faults or waiting shows in CPU and wall alone.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeSuite } from './suite-shape.js';
import { countInstructions, median, startFakeServer, type TimedRun, timeFreshEvalRun } from './support.js';

const { values } = parseArgs({
  options: {
    cli: { type: 'string', multiple: true },
    cases: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '50' },
    pairs: { type: 'string', default: '8' },
    'latency-ms': { type: 'string', default: '50' },
    dir: { type: 'string', default: tmpdir() },
    instructions: { type: 'boolean', default: false },
  },
});
const n = Number(values.cases);
const j = Number(values.concurrency);
const pairs = Math.max(1, Number(values.pairs));
const latencyMs = Number(values['latency-ms']);

/** A built checkout's CLI, or why the benchmark cannot run it. */
const built = (bin: string): string => {
  const path = resolve(bin);
  if (!existsSync(path) || !existsSync(join(dirname(dirname(path)), 'dist', 'proctor', 'main.cjs')))
    throw new Error(
      `${bin} is not the CLI of a built checkout (bin/proctor.js, dist/proctor/main.cjs): run npm run build`,
    );
  return path;
};
const [cliA, cliB, ...more] = values.cli ?? [];
if (cliA === undefined || cliB === undefined || more.length > 0)
  throw new Error('give two --cli <checkout>/bin/proctor.js: A, then B');
const builds = { A: built(cliA), B: built(cliB) };
type Build = keyof typeof builds;

const server = await startFakeServer(latencyMs);
const project = mkdtempSync(join(values.dir, 'proctor-ab-'));
const warm = mkdtempSync(join(values.dir, 'proctor-ab-warm-'));

const perCase = (s: number): string => ((s * 1000) / n).toFixed(3);
const ideal = (n * latencyMs) / j / 1000;
const runArgs = ['-j', String(j)];

try {
  writeSuite(warm, 1, server.url);
  for (const build of ['A', 'B'] as const) await timeFreshEvalRun(warm, builds[build]);
  writeSuite(project, n, server.url);
  process.stdout.write(
    `${n} cases -j ${j}, ${latencyMs} ms a call (ideal wall ${ideal.toFixed(2)} s), ${pairs} pairs\n`,
  );
  process.stdout.write(`A ${builds.A}\nB ${builds.B}\n`);
  if (values.instructions) await compareInstructions();
  else await compareTimes();
} finally {
  server.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(warm, { recursive: true, force: true });
}

/**
 * Runs `measure` for each build in alternated pairs (A B, then B A, ...), says when a run did not exit 1 (one test in
 * 20 expects a wrong answer: a whole run exits 1), and calls `onPair` with each pair's two results.
 */
async function alternatedPairs<R extends { code: number | null }>(
  measure: (bin: string) => Promise<R>,
  onPair: (p: number, a: R, b: R) => void,
): Promise<Record<Build, R[]>> {
  const results: Record<Build, R[]> = { A: [], B: [] };
  for (let p = 0; p < pairs; p++) {
    const order: Build[] = p % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
    for (const build of order) {
      const run = await measure(builds[build]);
      if (run.code !== 1) process.stdout.write(`  ${build} exited ${run.code}, not 1: not a whole run's figures\n`);
      results[build].push(run);
    }
    onPair(p, results.A[p] as R, results.B[p] as R);
  }
  return results;
}

/** Each build's instructions per run, in alternated pairs, and the median of the pairs' B/A. */
async function compareInstructions(): Promise<void> {
  const giga = (count: number): string => (count / 1e9).toFixed(3);
  const runs = await alternatedPairs(
    (bin) => countInstructions(project, bin, runArgs),
    (p, a, b) =>
      process.stdout.write(
        `pair ${p + 1}: instructions A ${giga(a.instructions)} G B ${giga(b.instructions)} G ` +
          `(B/A ${(b.instructions / a.instructions).toFixed(4)})\n`,
      ),
  );
  for (const build of ['A', 'B'] as const) {
    const all = runs[build].map((r) => r.instructions);
    process.stdout.write(
      `${build}: ${giga(median(all))} G instructions (${giga(Math.min(...all))}-${giga(Math.max(...all))}), ` +
        `${(median(all) / n / 1e6).toFixed(3)} M a case\n`,
    );
  }
  const ratios = runs.A.map((a, p) => (runs.B[p] as typeof a).instructions / a.instructions);
  process.stdout.write(
    `B/A, median of the pairs: instructions ${median(ratios).toFixed(4)} (B fewer in ${ratios.filter((r) => r < 1).length} of ${pairs})\n`,
  );
}

/** Each build's CPU and wall per run, in alternated pairs, and the medians of the pairs' B/A. */
async function compareTimes(): Promise<void> {
  const runs = await alternatedPairs(
    (bin) => timeFreshEvalRun(project, bin, runArgs),
    (p, a, b) =>
      process.stdout.write(
        `pair ${p + 1}: cpu ms/case A ${perCase(a.cpuS)} B ${perCase(b.cpuS)} (B/A ${(b.cpuS / a.cpuS).toFixed(3)}), ` +
          `wall s A ${a.wallS.toFixed(2)} B ${b.wallS.toFixed(2)} (B/A ${(b.wallS / a.wallS).toFixed(3)})\n`,
      ),
  );
  for (const build of ['A', 'B'] as const) {
    const cpu = runs[build].map((r) => r.cpuS);
    const wall = median(runs[build].map((r) => r.wallS));
    process.stdout.write(
      `${build}: cpu ms/case ${perCase(median(cpu))} (${perCase(Math.min(...cpu))}-${perCase(Math.max(...cpu))}), ` +
        `wall ${wall.toFixed(2)} s (${(wall / ideal).toFixed(2)} × ideal), ` +
        `faults/case ${(median(runs[build].map((r) => r.minorFaults)) / n).toFixed(1)}, ` +
        `peak RSS ${median(runs[build].map((r) => r.peakRssMb))} MB\n`,
    );
  }
  const ratios = (of: (r: TimedRun) => number): number[] => runs.A.map((a, p) => of(runs.B[p] as TimedRun) / of(a));
  const cpu = ratios((r) => r.cpuS);
  process.stdout.write(
    `B/A, median of the pairs: cpu ${median(cpu).toFixed(3)} (B lower in ${cpu.filter((r) => r < 1).length} of ` +
      `${pairs}), wall ${median(ratios((r) => r.wallS)).toFixed(3)}\n`,
  );
}
