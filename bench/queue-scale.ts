// The queue runner's scaling (issue 13): one eval of N cases against the fake model (200 ms), executed by 1, 2
// and 4 `proctor worker` processes of concurrency 10 on Redis + PostgreSQL.
//   npx tsx bench/queue-scale.ts [--cases 2000] [--latency-ms 200] [--workers 1,2,4] [--cpu-prof DIR]
// Prints wall ÷ ideal (ideal = cases × latency ÷ (workers × 10)) and the CPU per case summed over the follower
// and every worker (dispatch, claim, commit and the engine's own per-case work). Goals: ≤ 1.3×, ≤ 2 ms.
// `over_local` is that CPU less what the local runner spends per case on the same eval (SQLite, one process,
// measured first): the part the queue adds; `follower`/`workers` split the CPU per case between the command and
// the worker processes. PostgreSQL's and Redis's own CPU is not counted.
// Where the wall goes: `first_s` is when the first case started and `last_s` when the last one finished (from the
// store, seconds after the command was spawned), `in_flight` the mean number of cases executing in between; `pg_tx`
// is PostgreSQL transactions per case in the bench's database, every process's (round trips, roughly);
// `w_start_ms` the CPU a worker spent starting (until it took jobs), not in the per-case figures; `pg_ms` the CPU
// per case of PostgreSQL's backends serving the bench's database (on the same cores here; not in the other figures).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { cli, startFakeServer, timeProctor } from './support.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '2000' },
    'latency-ms': { type: 'string', default: '200' },
    workers: { type: 'string', default: '1,2,4' },
    concurrency: { type: 'string', default: '10' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    // A CPU profile of every proctor process (follower and workers) into DIR, one file per process.
    'cpu-prof': { type: 'string' },
  },
});
const cases = Number(values.cases);
const latencyMs = Number(values['latency-ms']);
const perWorker = Number(values.concurrency);
const nodeArgs = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] : [];

/** User + system CPU seconds of a live process, from /proc (USER_HZ 100). */
const cpuOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

const inDatabase = async <T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
};
/**
 * The CPU PostgreSQL's backends spend for one database while `during` runs, sampled every 200 ms: a backend
 * that exits between samples loses its last moments. Backends already there count from the first sample.
 */
const postgresCpu = async (db: string, during: () => Promise<void>): Promise<number> => {
  const client = new pg.Client({ connectionString: values.pg });
  await client.connect();
  const seen = new Map<number, { from: number; to: number }>();
  const sample = async (): Promise<void> => {
    const live = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [db]);
    for (const { pid } of live.rows) {
      try {
        const cpu = cpuOf(pid);
        const known = seen.get(pid);
        if (known) known.to = cpu;
        else seen.set(pid, { from: sampling ? cpu : 0, to: cpu });
      } catch {
        // Gone since the query.
      }
    }
  };
  let sampling = true;
  await sample();
  sampling = false;
  let sampled = Promise.resolve();
  const timer = setInterval(() => {
    sampled = sampled.then(sample, () => {});
  }, 200);
  try {
    await during();
  } finally {
    clearInterval(timer);
    await sampled;
    await sample().catch(() => {});
    await client.end();
  }
  return [...seen.values()].reduce((sum, b) => sum + b.to - b.from, 0);
};

const lobby = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => inDatabase(values.pg, fn);

/** Removes the bench pool's keys from Redis (its queue's id counter and event stream would stay forever). */
const dropPool = async (pool: string): Promise<void> => {
  const redis = new Redis(values.redis, { maxRetriesPerRequest: null });
  const queue = new Queue(`proctor-${pool}`, { connection: redis });
  try {
    await queue.obliterate({ force: true });
  } finally {
    await queue.close();
    redis.disconnect();
  }
};

const evalText = (url: string): string => `
targets: [{ label: fake, kind: openai, base_url: "${url}", model: fake, api_key: k }]
prompts: ["{{ q }}"]
default_test: { assert: [{ type: contains, value: echo }] }
tests:
${Array.from({ length: cases }, (_, i) => `  - { id: t${i}, vars: { q: "q${i}" } }`).join('\n')}
`;

const server = await startFakeServer(latencyMs);
const rows: string[] = [
  'workers  wall_s  ideal_s  wall/ideal  cpu_ms/case  over_local  follower  workers  w_start_ms  pg_ms  first_s  last_s  in_flight  pg_tx  exit',
];
try {
  const local = mkdtempSync(join(tmpdir(), 'proctor-queue-bench-local-'));
  let localMsPerCase: number;
  try {
    writeFileSync(join(local, 'bench.eval.yaml'), evalText(server.url));
    // As many at once as the largest fleet, so it takes seconds, not minutes.
    const widest = Math.max(...values.workers.split(',').map(Number)) * perWorker;
    const run = await timeProctor(local, ['eval', 'run', '-q', '-j', String(widest), '-o', 'out']);
    localMsPerCase = (run.cpuS * 1000) / cases;
    process.stderr.write(`local runner: ${localMsPerCase.toFixed(2)} ms CPU per case\n`);
  } finally {
    rmSync(local, { recursive: true, force: true });
  }
  for (const n of values.workers.split(',').map(Number)) {
    const db = `proctor_bench_${randomBytes(5).toString('hex')}`;
    await lobby((c) => c.query(`create database ${db}`));
    const url = new URL(values.pg);
    url.pathname = `/${db}`;
    const dir = mkdtempSync(join(tmpdir(), 'proctor-queue-bench-'));
    const workers: ChildProcess[] = [];
    let measured: string[] | undefined;
    let code: number | null = null;
    try {
      writeFileSync(
        join(dir, 'proctor.toml'),
        `[store]\nurl = "${url}"\n[runner]\nkind = "queue"\n[runner.config]\nredis = "${values.redis}"\npool = "${db}"\n`,
      );
      writeFileSync(join(dir, 'bench.eval.yaml'), evalText(server.url));
      for (let i = 0; i < n; i++) {
        const worker = spawn(process.execPath, [...nodeArgs, cli, 'worker', '--concurrency', String(perWorker)], {
          cwd: dir,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        await new Promise<void>((resolve) => worker.stderr?.once('data', () => resolve()));
        workers.push(worker);
      }
      const before = workers.reduce((s, w) => s + cpuOf(w.pid as number), 0);
      const spawnedAt = Date.now();
      let run: Awaited<ReturnType<typeof timeProctor>> | undefined;
      const pgCpu = await postgresCpu(db, async () => {
        run = await timeProctor(dir, ['eval', 'run', '-q', '-j', String(n * perWorker), '-o', 'out'], nodeArgs);
      });
      if (!run) throw new Error('the eval run did not run');
      const workerCpu = workers.reduce((s, w) => s + cpuOf(w.pid as number), 0) - before;
      const span = await inDatabase(url.toString(), (c) =>
        c.query<{ first: string; last: string; busy: string }>(
          'select min(started_at) as first, max(finished_at) as last, sum(finished_at - started_at) as busy from runs',
        ),
      );
      const { first, last, busy } = span.rows[0] ?? { first: '0', last: '0', busy: '0' };
      const ideal = (cases * latencyMs) / 1000 / (n * perWorker);
      const perCase = (cpuS: number): number => (cpuS * 1000) / cases;
      const cpuMsPerCase = perCase(run.cpuS + workerCpu);
      const sinceSpawn = (at: string): string => ((Number(at) - spawnedAt) / 1000).toFixed(1);
      measured = [
        String(n).padStart(7),
        run.wallS.toFixed(1).padStart(6),
        ideal.toFixed(1).padStart(7),
        (run.wallS / ideal).toFixed(2).padStart(10),
        cpuMsPerCase.toFixed(2).padStart(11),
        (cpuMsPerCase - localMsPerCase).toFixed(2).padStart(10),
        perCase(run.cpuS).toFixed(2).padStart(8),
        perCase(workerCpu).toFixed(2).padStart(7),
        ((before / n) * 1000).toFixed(0).padStart(9),
        perCase(pgCpu).toFixed(2).padStart(5),
        sinceSpawn(first).padStart(7),
        sinceSpawn(last).padStart(6),
        (Number(busy) / Math.max(1, Number(last) - Number(first))).toFixed(1).padStart(9),
      ];
      code = run.code;
    } finally {
      // A profiled worker writes its profile as it exits: it is drained (SIGTERM), not killed.
      await Promise.all(
        workers.map((w) => {
          const exited = new Promise((resolve) => w.once('exit', resolve));
          w.kill(values['cpu-prof'] ? 'SIGTERM' : 'SIGKILL');
          return exited;
        }),
      );
      rmSync(dir, { recursive: true, force: true });
      // Once every backend has ended (the workers' after them), each has reported its transactions.
      const tx = await lobby(async (c) => {
        const live = (): Promise<number> =>
          c
            .query<{ n: string }>('select count(*) as n from pg_stat_activity where datname = $1', [db])
            .then((r) => Number(r.rows[0]?.n));
        for (let tries = 0; tries < 50 && (await live()) > 0; tries++) await new Promise((r) => setTimeout(r, 100));
        return c.query<{ n: string }>(
          'select xact_commit + xact_rollback as n from pg_stat_database where datname = $1',
          [db],
        );
      });
      if (measured)
        rows.push(
          [...measured, (Number(tx.rows[0]?.n ?? 0) / cases).toFixed(1).padStart(5), String(code).padStart(4)].join(
            '  ',
          ),
        );
      process.stderr.write(`${rows.at(-1)}\n`);
      await lobby((c) => c.query(`drop database if exists ${db} with (force)`));
      await dropPool(db);
    }
  }
} finally {
  server.stop();
}
process.stdout.write(`${rows.join('\n')}\n`);
