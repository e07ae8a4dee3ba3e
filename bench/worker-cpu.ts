// One queue worker's CPU per case (issue 13), the figure bench/queue-scale sums over a fleet, measured alone and
// steadily enough to compare two checkouts: on these shared machines queue-scale's CPU columns move by ±20%
// between identical runs, this one's by a few percent.
//   npx tsx bench/worker-cpu.ts [--cases 1000] [--latency-ms 5] [--rounds 2] [--cli <checkout>/bin/proctor.js ...]
//   [--pg postgres://…/test] [--redis redis://…]
// Each round, for each CLI in turn: an eval of N distinct tests (a `contains` and a per-test `equals`) is submitted
// with --detach and left queued, then one `proctor worker --concurrency 10` executes all of it against the fake
// model. Printed per CLI and round: the worker's user + system CPU per case from when it said it was ready (its
// start is not counted) to the last case's end, and its full (mark-compact) collections, from --trace-gc.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { dropPool, inDatabase } from './queue-support.js';
import { cpuOf, cli as ownCli, startFakeServer } from './support.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '1000' },
    'latency-ms': { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    cli: { type: 'string', multiple: true },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
  },
});
const cases = Number(values.cases);
const clis = values.cli ?? [ownCli];

const evalText = (url: string): string =>
  [
    `targets: [{ label: fake, kind: openai, base_url: "${url}", model: fake, api_key: k }]`,
    'prompts: ["Ticket {{ ref }}: {{ body }}"]',
    'default_test: { assert: [{ type: contains, value: echo }] }',
    'tests:',
    ...Array.from(
      { length: cases },
      (_, i) =>
        `  - { id: t${i}, vars: { ref: "REF-${i}", body: "case ${i}" }, assert: [{ type: equals, value: "echo: Ticket REF-${i}: case ${i}" }] }`,
    ),
  ].join('\n');

const lobby = (statement: string): Promise<unknown> => inDatabase(values.pg, (c) => c.query(statement));

const exited = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('close', () => resolve())));

/** One worker executing a fresh queue run of `cases` cases: its CPU per case (ms) and full collections. */
const measure = async (cli: string, modelUrl: string): Promise<{ msPerCase: number; fullGcs: number }> => {
  const db = `proctor_bench_${randomBytes(5).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'proctor-worker-cpu-'));
  await lobby(`create database ${db}`);
  const store = new URL(values.pg);
  store.pathname = `/${db}`;
  let worker: ChildProcess | undefined;
  try {
    writeFileSync(
      join(dir, 'proctor.toml'),
      `[store]\nurl = "${store}"\n[runner]\nkind = "queue"\n[runner.config]\nredis = "${values.redis}"\npool = "${db}"\n`,
    );
    writeFileSync(join(dir, 'bench.eval.yaml'), evalText(modelUrl));
    const submit = spawn(process.execPath, [cli, 'eval', 'run', '--detach', '-q', '-j', '10'], {
      cwd: dir,
      stdio: 'ignore',
    });
    await exited(submit);
    if (submit.exitCode !== 0) throw new Error(`the submit exited ${submit.exitCode}`);
    const running = spawn(process.execPath, ['--trace-gc', cli, 'worker', '--concurrency', '10'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker = running;
    let fullGcs = 0;
    let readyAt: number | undefined;
    running.stdout?.on('data', (d: Buffer) => {
      // Counted once the worker is ready: the collections of its start are not the cases'.
      if (readyAt !== undefined) fullGcs += d.toString().split('Mark-Compact').length - 1;
    });
    const pid = running.pid as number;
    await new Promise<void>((resolve) =>
      running.stderr?.once('data', () => {
        readyAt = cpuOf(pid);
        resolve();
      }),
    );
    await inDatabase(store.toString(), async (client) => {
      for (;;) {
        const ended = await client.query<{ n: string }>(
          "select count(*) as n from runs where status not in ('QUEUED', 'RUNNING')",
        );
        if (Number(ended.rows[0]?.n) >= cases) return;
        if (running.exitCode !== null) throw new Error(`the worker exited ${running.exitCode} before the run ended`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    });
    const cpu = cpuOf(pid) - (readyAt ?? 0);
    return { msPerCase: (cpu * 1000) / cases, fullGcs };
  } finally {
    worker?.kill('SIGTERM');
    if (worker) await exited(worker);
    rmSync(dir, { recursive: true, force: true });
    await lobby(`drop database ${db} with (force)`);
    await dropPool(values.redis, db);
  }
};

const server = await startFakeServer(Number(values['latency-ms']));
try {
  process.stdout.write(`one worker, concurrency 10, ${cases} cases, model ${values['latency-ms']} ms\n`);
  const figures = new Map<string, string[]>(clis.map((c) => [c, []]));
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const cli of clis) {
      const { msPerCase, fullGcs } = await measure(cli, server.url);
      figures.get(cli)?.push(`${msPerCase.toFixed(3)} ms/case (${fullGcs} full GC)`);
    }
  }
  for (const [cli, rows] of figures) process.stdout.write(`${rows.join('  ')}  ${cli}\n`);
} finally {
  server.stop();
}
