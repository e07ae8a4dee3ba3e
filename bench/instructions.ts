// Instructions per case, counted by valgrind's callgrind: what a case costs Proctor's process, whatever else the
// machine is doing (CPU seconds on these shared machines move by ±20% between identical runs; an instruction count
// repeats to ~1%). Complements bench/suite and bench/queue-scale, whose goals are in seconds.
//   npx tsx bench/instructions.ts [--side local|worker] [--cases 50,250] [--cli <checkout>/bin/proctor.js ...]
//   [--pg postgres://…/test] [--redis redis://…]
// Each size is one eval of N distinct tests (a `contains` and a per-test `equals`) against the fake model (5 ms):
// `local` counts `proctor eval run -j 10` on SQLite, `worker` one `proctor worker --concurrency 10` executing a
// queue run submitted with --detach. Per case is the difference between the two sizes over their difference in
// cases, so start-up and exit drop out; small sizes include the first cases' cost (code not yet optimised, the
// heap still growing), which every short run and every new worker pays. Under callgrind a process runs ~50×
// slower: 250 cases take about half a minute.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cli as ownCli, startFakeServer } from './support.js';

const { values } = parseArgs({
  options: {
    side: { type: 'string', default: 'local' },
    cases: { type: 'string', default: '50,250' },
    cli: { type: 'string', multiple: true },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
  },
});
const side = values.side;
if (side !== 'local' && side !== 'worker') throw new Error(`--side is local or worker, not ${side}`);
const [small, large] = (values.cases ?? '').split(',').map(Number);
if (!small || !large || large <= small) throw new Error('--cases takes two sizes, the smaller first');
const clis = values.cli ?? [ownCli];

const evalText = (url: string, n: number): string =>
  [
    `targets: [{ label: fake, kind: openai, base_url: "${url}", model: fake, api_key: k }]`,
    'prompts: ["Ticket {{ ref }}: {{ body }}"]',
    'default_test: { assert: [{ type: contains, value: echo }] }',
    'tests:',
    ...Array.from(
      { length: n },
      (_, i) =>
        `  - { id: t${i}, vars: { ref: "REF-${i}", body: "case ${i} of ${n}" }, assert: [{ type: equals, value: "echo: Ticket REF-${i}: case ${i} of ${n}" }] }`,
    ),
  ].join('\n');

/** Runs `args` under callgrind in `cwd`; resolves to its instruction count once it exits. */
const counted = (cwd: string, cli: string, args: string[], env: NodeJS.ProcessEnv) => {
  const out = join(cwd, `callgrind.${randomBytes(4).toString('hex')}`);
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${out}`, process.execPath, cli, ...args],
    { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<number>((resolve, reject) =>
    child.on('close', () => {
      const total = /Collected : (\d+)/.exec(stderr)?.[1];
      if (total) resolve(Number(total));
      else reject(new Error(`callgrind counted nothing:\n${stderr.slice(-2000)}`));
    }),
  );
  return { child, done };
};

const run = (cwd: string, cli: string, args: string[], env: NodeJS.ProcessEnv): Promise<number | null> =>
  new Promise((resolve) => spawn(process.execPath, [cli, ...args], { cwd, env, stdio: 'ignore' }).on('close', resolve));

const withDatabase = async <T>(use: (url: string) => Promise<T>): Promise<T> => {
  const db = `proctor_bench_${randomBytes(5).toString('hex')}`;
  const lobby = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: values.pg });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await lobby(`create database ${db}`);
  const url = new URL(values.pg);
  url.pathname = `/${db}`;
  try {
    return await use(url.toString());
  } finally {
    await lobby(`drop database ${db} with (force)`);
  }
};

/** The instructions one measured process spends on an eval of `n` cases. */
const measure = async (cli: string, n: number, modelUrl: string): Promise<number> => {
  const dir = mkdtempSync(join(tmpdir(), 'proctor-instructions-'));
  try {
    writeFileSync(join(dir, 'bench.eval.yaml'), evalText(modelUrl, n));
    if (side === 'local') return await counted(dir, cli, ['eval', 'run', '-q', '-j', '10'], process.env).done;
    return await withDatabase(async (store) => {
      const pool = `bench_${randomBytes(4).toString('hex')}`;
      writeFileSync(
        join(dir, 'proctor.toml'),
        `[store]\nurl = "${store}"\n[runner]\nkind = "queue"\n[runner.config]\nredis = "${values.redis}"\npool = "${pool}"\n`,
      );
      // Submitted first and left queued: the worker alone executes every case, and is counted alone.
      await run(dir, cli, ['eval', 'run', '--detach', '-q', '-j', '10'], process.env);
      const worker = counted(dir, cli, ['worker', '--concurrency', '10'], process.env);
      const client = new pg.Client({ connectionString: store });
      await client.connect();
      try {
        for (;;) {
          const ended = await client.query<{ n: string }>(
            "select count(*) as n from runs where status not in ('QUEUED', 'RUNNING')",
          );
          if (Number(ended.rows[0]?.n) >= n) break;
          if (worker.child.exitCode !== null) throw new Error('the worker exited before the run ended');
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      } finally {
        await client.end();
      }
      worker.child.kill('SIGTERM');
      return await worker.done;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

const server = await startFakeServer(5);
try {
  process.stdout.write(`${side}: instructions per case between ${small} and ${large} cases\n`);
  for (const cli of clis) {
    const a = await measure(cli, small, server.url);
    const b = await measure(cli, large, server.url);
    process.stdout.write(
      `${((b - a) / (large - small) / 1e6).toFixed(3)} M/case  (${(a / 1e6).toFixed(0)} M at ${small}, ${(b / 1e6).toFixed(0)} M at ${large})  ${cli}\n`,
    );
  }
} finally {
  server.stop();
}
