// Proctor's own cost on a plain eval against a fast model (issue: foundation).
//   npx tsx bench/overhead.ts [--cases 10000] [--latency-ms 50] [--concurrency 100] [--budget-usd 1000]
// Starts the fake model server in its own process, runs `proctor eval run` on a generated eval, and reports
// wall time ÷ the ideal (cases × latency ÷ concurrency), Proctor's CPU per case, its peak RSS, and the
// start-up time of `proctor --version`. Ratios, not absolute times, are what compare across machines.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cli, median, startFakeServer, timeProctor } from './support.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '10000' },
    'latency-ms': { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '100' },
    // The project (store and bundle) lives here; /dev/shm separates Proctor's cost from the disk's.
    dir: { type: 'string', default: tmpdir() },
    // Dispatch under a budget (priced at $1/M tokens, set high enough that every case runs): its cost alone.
    'budget-usd': { type: 'string' },
  },
});
const budget = values['budget-usd'];
const cases = Number(values.cases);
const latencyMs = Number(values['latency-ms']);
const concurrency = Number(values.concurrency);

const startup = (): number => {
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t = process.hrtime.bigint();
    execFileSync(process.execPath, [cli, '--version']);
    times.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  return median(times);
};

const server = await startFakeServer(latencyMs);
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
  if (budget !== undefined) writeFileSync(join(dir, 'proctor.toml'), '[pricing."fake"]\ninput = 1.0\noutput = 1.0\n');
  const budgetArgs = budget === undefined ? [] : ['--budget-usd', budget];
  const run = await timeProctor(dir, ['eval', 'run', '-q', '-j', String(concurrency), ...budgetArgs]);
  const ideal = (cases * latencyMs) / concurrency / 1000;
  const report = {
    dir: values.dir,
    cases,
    latency_ms: latencyMs,
    concurrency,
    ...(budget === undefined ? {} : { budget_usd: Number(budget) }),
    exit_code: run.code,
    wall_s: Number(run.wallS.toFixed(2)),
    ideal_s: ideal,
    wall_over_ideal: Number((run.wallS / ideal).toFixed(3)),
    cpu_ms_per_case: Number(((run.cpuS * 1000) / cases).toFixed(3)),
    peak_rss_mb: run.peakRssMb,
    version_startup_s: Number(startup().toFixed(3)),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  server.stop();
  rmSync(dir, { recursive: true, force: true });
}
