// Proctor's own cost on a plain eval against a fast model (issue: foundation).
//   npx tsx bench/overhead.ts [--cases 10000] [--latency-ms 50] [--concurrency 100]
// Starts the fake model server in its own process, runs `proctor eval run` on a generated eval, and reports
// wall time ÷ the ideal (cases × latency ÷ concurrency), Proctor's CPU per case, its peak RSS, and the
// start-up time of `proctor --version`. Ratios, not absolute times, are what compare across machines.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '10000' },
    'latency-ms': { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '100' },
    // The project (store and bundle) lives here; /dev/shm separates Proctor's cost from the disk's.
    dir: { type: 'string', default: tmpdir() },
  },
});
const cases = Number(values.cases);
const latencyMs = Number(values['latency-ms']);
const concurrency = Number(values.concurrency);
const root = new URL('..', import.meta.url).pathname;
const cli = join(root, 'bin', 'proctor.js');

const startServer = (): Promise<{ url: string; stop: () => void }> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'bench', 'fake-server.ts'), '--latency-ms', String(latencyMs)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    child.stdout.once('data', (d: Buffer) => resolve({ url: d.toString().trim(), stop: () => child.kill('SIGTERM') }));
    child.once('error', reject);
  });

const median = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const startup = (): number => {
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t = process.hrtime.bigint();
    execFileSync(process.execPath, [cli, '--version']);
    times.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  return median(times);
};

const server = await startServer();
const dir = mkdtempSync(join(values.dir, 'proctor-bench-'));
try {
  writeFileSync(
    join(dir, 'tests.jsonl'),
    Array.from({ length: cases }, (_, i) =>
      JSON.stringify({ id: `t${i}`, vars: { q: `question ${i}` }, assert: [{ type: 'contains', value: 'question' }] }),
    ).join('\n'),
  );
  writeFileSync(
    join(dir, 'bench.eval.yaml'),
    `targets:\n  - { kind: openai, base_url: "${server.url}", model: fake, api_key: bench }\nprompts: ["{{ q }}"]\ntests: file://tests.jsonl\n`,
  );
  const timeFile = join(dir, 'time.txt');
  const started = process.hrtime.bigint();
  const run = spawn(
    '/usr/bin/time',
    ['-f', '%e %U %S %M', '-o', timeFile, process.execPath, cli, 'eval', 'run', '-q', '-j', String(concurrency)],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const [, user, sys, maxKb] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
  const ideal = (cases * latencyMs) / concurrency / 1000;
  const report = {
    dir: values.dir,
    cases,
    latency_ms: latencyMs,
    concurrency,
    exit_code: code,
    wall_s: Number(wall.toFixed(2)),
    ideal_s: ideal,
    wall_over_ideal: Number((wall / ideal).toFixed(3)),
    cpu_ms_per_case: Number(((((user ?? 0) + (sys ?? 0)) * 1000) / cases).toFixed(3)),
    peak_rss_mb: Math.round((maxKb ?? 0) / 1024),
    version_startup_s: Number(startup().toFixed(3)),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  server.stop();
  rmSync(dir, { recursive: true, force: true });
}
