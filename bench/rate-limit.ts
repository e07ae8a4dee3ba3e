// Adaptive rate limiting (issue 12) against an endpoint that allows 5 requests at once.
//   npx tsx bench/rate-limit.ts [--cases 500] [--latency-ms 100] [--concurrency 50] [--decrease 0.5]
// The fake answers 429 (retry-after-ms 50) to a request arriving while 5 are in flight; it runs in this process,
// Proctor in its own. Reports the outcome counts, the 429s, the peak in flight at the fake, and the rate the fake
// served from its first answer to its last ÷ the ideal 5 ÷ latency.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startFakeModelServer } from '../test/support/fake-model-server.js';
import { timeProctor } from './support.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '500' },
    'latency-ms': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '50' },
    // The target's `rate.decrease`; unset, the default.
    decrease: { type: 'string' },
  },
});
const cases = Number(values.cases);
const latencyMs = Number(values['latency-ms']);
const allowed = 5;

const server = await startFakeModelServer({ maxConcurrent: allowed, latencyMs, recordPayloads: false });
const dir = mkdtempSync(join(tmpdir(), 'proctor-bench-rl-'));
try {
  const rate = values.decrease === undefined ? '' : `, rate: { decrease: ${values.decrease} }`;
  writeFileSync(
    join(dir, 'cases.jsonl'),
    Array.from({ length: cases }, (_, n) => JSON.stringify({ vars: { n } })).join('\n'),
  );
  // Priced at nothing: no "no price" warning among the figures.
  writeFileSync(join(dir, 'proctor.toml'), '[pricing."openai:m"]\ninput = 0\noutput = 0\n');
  writeFileSync(
    join(dir, 'rl.eval.yaml'),
    `targets: [{ label: api, kind: openai, base_url: "${server.url}", model: m, api_key: bench${rate} }]
prompts: ["case {{ n }}"]
evaluate_options: { max_concurrency: ${Number(values.concurrency)}, retries: 0 }
tests: file://cases.jsonl
`,
  );
  const run = await timeProctor(dir, ['eval', 'run', 'rl.eval.yaml', '-q']);
  const results = join(dir, '.proctor', 'results');
  const [bundle] = readdirSync(results);
  const summary = JSON.parse(readFileSync(join(results, bundle ?? '', 'summary.json'), 'utf8')) as {
    counts: Record<string, number>;
  };
  const served = server.requests.filter((r) => r.status === 200);
  const first = Math.min(...served.map((r) => r.at));
  const last = Math.max(...served.map((r) => r.endedAt ?? r.at));
  const perS = served.length / ((last - first) / 1000);
  const ideal = (allowed * 1000) / latencyMs;
  const report = {
    cases,
    latency_ms: latencyMs,
    concurrency: Number(values.concurrency),
    decrease: values.decrease ?? 'default',
    exit: run.code,
    counts: summary.counts,
    rejected_429: server.requests.filter((r) => r.status === 429).length,
    peak_in_flight: server.peakInFlight,
    wall_s: Number(run.wallS.toFixed(2)),
    served_per_s: Number(perS.toFixed(1)),
    ideal_per_s: ideal,
    of_ideal: Number((perS / ideal).toFixed(2)),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
