// Planning `--rerun-failed` against a large bundle (issue: resume and rerun-failed).
//   npx tsx bench/rerun-plan.ts [--keys 100000] [--rows 1000000] [--failed-share 0.05] [--dir /dev/shm]
//     [--cli <checkout>/bin/proctor.js ...] [--runs 1]
// Writes a suite of `keys` tests and a bundle whose index.jsonl holds `rows` rows over those keys (each key
// executed rows/keys times, the latest execution failed for a share of them), then times
// `proctor eval run --rerun-failed <bundle> --dry-run` (wall and CPU seconds): reading the index, reducing it to
// the latest row per key, expanding the suite and selecting. Goal: ≤ 3 s and ≤ 400 MB at 1,000,000 rows.
// KEEP_BENCH=1 keeps the suite and bundle (the folder is printed), e.g. to profile one planning with --cpu-prof.
import { spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { caseKey } from '../src/plan/identity.js';
import { childrenOf, cpuOf } from './support.js';

const { values } = parseArgs({
  options: {
    keys: { type: 'string', default: '100000' },
    rows: { type: 'string', default: '1000000' },
    'failed-share': { type: 'string', default: '0.05' },
    // Where the suite and its 500 MB bundle go (default: the system's temp folder); /dev/shm keeps the disk out of it.
    dir: { type: 'string', default: tmpdir() },
    // The CLIs to compare (bin/proctor.js of each checkout; default this one's), and how many rounds to time.
    cli: { type: 'string', multiple: true },
    runs: { type: 'string', default: '1' },
  },
});
const keys = Number(values.keys);
const rows = Number(values.rows);
const failedShare = Number(values['failed-share']);
const clis = values.cli ?? [new URL('../bin/proctor.js', import.meta.url).pathname];

const dir = mkdtempSync(join(values.dir, 'proctor-rerun-bench-'));
try {
  writeFileSync(
    join(dir, 'tests.jsonl'),
    Array.from({ length: keys }, (_, i) => JSON.stringify({ id: `t${i}`, vars: { q: `q${i}` } })).join('\n'),
  );
  writeFileSync(
    join(dir, 'big.eval.yaml'),
    'targets: [{ kind: echo }]\nprompts: ["{{ q }}"]\ndefault_test:\n  assert: [{ type: contains, value: q }]\ntests: file://tests.jsonl\n',
  );
  const bundle = join(dir, 'bundle');
  mkdirSync(bundle);
  const fd = openSync(join(bundle, 'index.jsonl'), 'w');
  const perKey = Math.max(1, Math.round(rows / keys));
  let written = 0;
  let lines: string[] = [];
  for (let round = 0; round < perKey && written < rows; round++) {
    for (let i = 0; i < keys && written < rows; i++, written++) {
      const identity = { eval: 'big.eval.yaml', test: `t${i}`, prompt: 'p1', target: 'echo', sample: 0 };
      const last = round === perKey - 1;
      const outcome = last && i < keys * failedShare ? 'failed' : round === 0 && i % 3 === 0 ? 'error' : 'passed';
      lines.push(
        JSON.stringify({
          schema: 'proctor.case/1',
          identity,
          key: caseKey(identity),
          fingerprint: 'f0f0f0f0f0f0f0f0f0f0',
          outcome,
          score: outcome === 'passed' ? 1 : 0,
          error: null,
          attempts: 1,
          duration_ms: 51,
          usage: { input_tokens: 12, output_tokens: 9, cost_usd: 0 },
          run_id: `20261129-000000-bench${round}.${i}`,
          group_id: `20261129-000000-bench${round}`,
          started_at: '2026-11-29T00:00:00.000Z',
          finished_at: '2026-11-29T00:00:00.051Z',
          artifacts: `cases/${caseKey(identity)}/${round + 1}`,
        }),
      );
      if (lines.length === 10_000) {
        writeSync(fd, `${lines.join('\n')}\n`);
        lines = [];
      }
    }
  }
  if (lines.length) writeSync(fd, `${lines.join('\n')}\n`);
  closeSync(fd);
  const timeFile = join(dir, 'time.txt');
  /**
   * One timed planning by the CLI at `cli`: wall and CPU seconds, peak RSS, and the main thread's CPU seconds
   * (sampled every 20 ms): what bounds the wall time on an idle machine, when a worker thread reads the index.
   */
  const timed = async (cli: string) => {
    const started = process.hrtime.bigint();
    const run = spawn(
      '/usr/bin/time',
      [
        '-f',
        '%e %M %U %S',
        '-o',
        timeFile,
        process.execPath,
        cli,
        'eval',
        'run',
        '--rerun-failed',
        bundle,
        '--dry-run',
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    run.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    let node: number | undefined;
    let mainCpu = 0;
    const sampler = setInterval(() => {
      node ??= childrenOf(run.pid as number)[0];
      try {
        if (node !== undefined) mainCpu = cpuOf(node, `/task/${node}`);
      } catch {
        // Ended since the last sample.
      }
    }, 20);
    await new Promise((resolve) => run.on('close', resolve));
    clearInterval(sampler);
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    const [, maxKb, user, system] =
      readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
    return {
      cli,
      planned: out.trim(),
      wall_s: Number(wall.toFixed(2)),
      // On a shared machine the CPU time varies less than the wall time: compare builds by both.
      cpu_s: Number(((user ?? 0) + (system ?? 0)).toFixed(2)),
      main_thread_cpu_s: mainCpu,
      peak_rss_mb: Math.round((maxKb ?? 0) / 1024),
    };
  };
  // Each round times every CLI given, in turn: builds compared on one bundle, alternating, as the load shifts.
  const runs = [];
  for (let round = 0; round < Number(values.runs); round++) for (const cli of clis) runs.push(await timed(cli));
  process.stdout.write(
    `${JSON.stringify(
      { keys, rows: written, index_mb: Math.round(statSync(join(bundle, 'index.jsonl')).size / 1e6), runs },
      null,
      2,
    )}\n`,
  );
} finally {
  if (!process.env.KEEP_BENCH) rmSync(dir, { recursive: true, force: true });
  else process.stderr.write(`kept ${dir}\n`);
}
