// The queue runner's scaling (issue 13): one eval of N cases against the fake model (200 ms), executed by 1, 2
// and 4 `proctor worker` processes of concurrency 10 on Redis + PostgreSQL.
//   npx tsx bench/queue-scale.ts [--cases 2000] [--latency-ms 200] [--workers 1,2,4] [--cpu-prof DIR] [--wire]
//   [--threads] [--again]
// Prints wall ÷ ideal (ideal = cases × latency ÷ (workers × 10)) and the CPU per case summed over the follower
// and every worker (dispatch, claim, commit and the engine's own per-case work). Goals: ≤ 1.3×, ≤ 2 ms.
// `over_local` is that CPU less what the local runner spends per case on the same eval (SQLite, one process,
// measured first): the part the queue adds; `follower`/`workers` split the CPU per case between the command and
// the worker processes. PostgreSQL's and Redis's own CPU is not counted.
// Where the wall goes: `first_s` is when the first case started and `last_s` when the last one finished (from the
// store, seconds after the command was spawned), `in_flight` the mean number of cases executing in between; `pg_tx`
// is PostgreSQL transactions per case in the bench's database, every process's (round trips, roughly);
// `w_start_ms` the CPU a worker spent starting (until it took jobs), not in the per-case figures; `pg_ms` the CPU
// per case of PostgreSQL's backends serving the bench's database (on the same cores here; not in the other figures),
// `redis_ms` Redis's (every client's: other users of the server count too).
// What does not depend on the machine's load, counted on the wire through relays (`f` the follower's, `w` all the
// workers'): PostgreSQL statements (`pg_st`) and round trips (`pg_rt`, a simple query or an extended-protocol Sync
// each) and Redis commands (`rd_cmd`, a script call counting one) per case; stderr breaks Redis's down by command.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { pgFrontendMessages } from '../test/support/pg-wire-counter.js';
import { startTcpRelay, type TcpRelay } from '../test/support/tcp-relay.js';
import { dropPool, inDatabase } from './queue-support.js';
import { childrenOf, cli, cpuOf, startFakeServer, timeProctor } from './support.js';

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
    // Through counting relays (the pg_st, pg_rt and rd_cmd columns): a hop more per call, so walls are not
    // comparable with a run without.
    wire: { type: 'boolean', default: false },
    // CPU per case by thread (main, V8's compiler and GC threads, libuv's pool) of the workers and the follower.
    threads: { type: 'boolean', default: false },
    // Then the same eval again through the same workers, warm by then: their CPU per case without what each
    // process spends once (V8 compiling and optimising the hot path, connections), on stderr. The table's
    // pg_tx then counts both runs' transactions.
    again: { type: 'boolean', default: false },
  },
});
const cases = Number(values.cases);
const latencyMs = Number(values['latency-ms']);
const perWorker = Number(values.concurrency);
const nodeArgs = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] : [];

/**
 * User + system CPU seconds of each thread of a live process, by its place in creation order (Node 20 names them
 * all "node"): `main`, then V8's platform threads (`t1`-`t5`: compilers and GC), then libuv's pool and others.
 */
const threadCpuOf = (pid: number): Map<string, number> => {
  const byPlace = new Map<string, number>();
  const tids = readdirSync(`/proc/${pid}/task`)
    .map(Number)
    .sort((a, b) => a - b);
  tids.forEach((tid, place) => {
    try {
      byPlace.set(place === 0 ? 'main' : `t${place}`, cpuOf(pid, `/task/${tid}`));
    } catch {
      // Gone since the listing.
    }
  });
  return byPlace;
};
/**
 * The follower's CPU by thread, sampled every 50 ms while `during` runs (it is /usr/bin/time's child): its last
 * moments before it exits are lost.
 */
const followerThreads = async (during: () => Promise<void>): Promise<Map<string, number>> => {
  let last = new Map<string, number>();
  const timer = setInterval(() => {
    try {
      for (const time of childrenOf(process.pid))
        for (const node of childrenOf(time))
          if (readFileSync(`/proc/${node}/comm`, 'utf8').trim() === 'node') last = threadCpuOf(node);
    } catch {
      // Exited since the listing.
    }
  }, 50);
  try {
    await during();
  } finally {
    clearInterval(timer);
  }
  return last;
};
const addThreads = (into: Map<string, number>, from: Map<string, number>, sign = 1): void => {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + sign * v);
};

/** What clients sent through a relay: PostgreSQL statements and round trips, Redis commands by name. */
interface WireCounts {
  statements: number;
  roundTrips: number;
  commands: Map<string, number>;
}
const noCounts = (): WireCounts => ({ statements: 0, roundTrips: 0, commands: new Map() });

/**
 * Statements are told apart (in `commands`) by their text's first words: a simple Query's, or that of the
 * statement an extended-protocol Bind executes (named on its Parse).
 */
const pgParser = (counts: WireCounts) => () => {
  const parsed = new Map<string, string>();
  const statement = (text: string): void => {
    const name = text
      .replace(/\/\* named \*\//, '')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 48);
    counts.commands.set(name, (counts.commands.get(name) ?? 0) + 1);
  };
  return pgFrontendMessages((type, message) => {
    const cString = (at: number): { text: string; next: number } => {
      const end = message.indexOf(0, at);
      return { text: message.toString('utf8', at, end), next: end + 1 };
    };
    if (type === 'Q' || type === 'E') counts.statements++;
    if (type === 'Q' || type === 'S') counts.roundTrips++;
    if (type === 'Q') statement(cString(5).text);
    if (type === 'P') {
      const name = cString(5);
      parsed.set(name.text, cString(name.next).text);
    }
    if (type === 'B') statement(parsed.get(cString(cString(5).next).text) ?? '?');
  });
};

/** One RESP command at the start of `b` (an array of bulk strings, as ioredis sends): its name and length. */
const respCommand = (b: Buffer): { name: string; end: number } | undefined => {
  const line = (at: number): { text: string; next: number } | undefined => {
    const end = b.indexOf('\r\n', at);
    return end < 0 ? undefined : { text: b.toString('latin1', at, end), next: end + 2 };
  };
  const head = line(0);
  if (!head) return undefined;
  const args: string[] = [];
  let at = head.next;
  for (let i = Number(head.text.slice(1)); i > 0; i--) {
    const size = line(at);
    if (!size) return undefined;
    const end = size.next + Number(size.text.slice(1));
    if (end + 2 > b.length) return undefined;
    if (args.length < 3) args.push(b.toString('latin1', size.next, end));
    at = end + 2;
  }
  const name = (args[0] ?? '').toLowerCase();
  // A script is told apart by how many keys it takes (BullMQ's differ).
  return { name: name.startsWith('eval') ? `${name}/${args[2]}` : name, end: at };
};

const respParser = (counts: WireCounts) => () => {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk: Buffer): void => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (let c = respCommand(pending); c; c = respCommand(pending)) {
      counts.commands.set(c.name, (counts.commands.get(c.name) ?? 0) + 1);
      pending = pending.subarray(c.end);
    }
  };
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

interface CaseTimes {
  created: number;
  dispatched: number;
  started: number;
  finished: number;
  pid: number;
}

/**
 * Where the fleet's slots went between the command's spawn and the last case's end, in seconds of wall (slot
 * seconds ÷ slots): executing (`busy`, and the mean case's ms); idle before the first case was submitted
 * (`start`), with nothing submitted waiting (`starved`: the submitter's window), with cases waiting that no slot
 * took (`undelivered`: dispatch, Redis and claim latency), and after the last case was submitted (`tail`).
 * Then: cases taken from a chain (started as dispatched) rather than a job, a job's mean delay from dispatch to
 * start, cases per worker (fairness), and when each worker started its first job after the first job was sent.
 */
const whereWallGoes = (cs: CaseTimes[], spawnedAt: number, slots: number): string => {
  const end = Math.max(...cs.map((c) => c.finished));
  const lastCreated = Math.max(...cs.map((c) => c.created));
  const firstCreated = Math.min(...cs.map((c) => c.created));
  const stepMs = 10;
  const idle = { start: 0, starved: 0, undelivered: 0, tail: 0 };
  let busy = 0;
  for (let t = spawnedAt; t < end; t += stepMs) {
    let executing = 0;
    let waiting = 0;
    for (const c of cs) {
      if (c.started <= t && t < c.finished) executing++;
      else if (c.created <= t && t < c.started) waiting++;
    }
    busy += executing;
    const free = Math.max(0, slots - executing);
    if (t < firstCreated) idle.start += free;
    else if (waiting > 0) idle.undelivered += free;
    else if (t >= lastCreated) idle.tail += free;
    else idle.starved += free;
  }
  const s = (slotSteps: number): string => ((slotSteps * stepMs) / 1000 / slots).toFixed(2);
  const jobs = cs.filter((c) => c.started !== c.dispatched);
  const jobsBySecond = new Map<number, number>();
  for (const c of jobs) {
    const second = Math.floor((c.started - spawnedAt) / 1000);
    jobsBySecond.set(second, (jobsBySecond.get(second) ?? 0) + 1);
  }
  const perPid = new Map<number, number>();
  for (const c of cs) perPid.set(c.pid, (perPid.get(c.pid) ?? 0) + 1);
  // How soon each worker took its first job after the first was sent: a batch should wake every idle worker.
  const firstSent = Math.min(...jobs.map((c) => c.dispatched));
  const firstJob = new Map<number, number>();
  for (const c of jobs) firstJob.set(c.pid, Math.min(firstJob.get(c.pid) ?? c.started, c.started));
  return [
    `busy ${s(busy)} s (case ${((busy * stepMs) / cs.length).toFixed(0)} ms)`,
    `idle: start ${s(idle.start)} s, starved ${s(idle.starved)} s, undelivered ${s(idle.undelivered)} s, tail ${s(idle.tail)} s`,
    `chained ${cs.length - jobs.length}/${cs.length}, job dispatch→start ${(jobs.reduce((a, c) => a + c.started - c.dispatched, 0) / Math.max(1, jobs.length)).toFixed(0)} ms`,
    `jobs started by second ${[...jobsBySecond].map(([second, k]) => `${second}:${k}`).join(' ')}`,
    `per worker ${[...perPid.values()].sort((a, b) => b - a).join('/')}`,
    `first job by worker ${[...firstJob.values()]
      .map((t) => t - firstSent)
      .sort((a, b) => a - b)
      .join('/')} ms after the first was sent`,
  ].join('; ');
};

const lobby = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => inDatabase(values.pg, fn);

const evalText = (url: string): string => `
targets: [{ label: fake, kind: openai, base_url: "${url}", model: fake, api_key: k }]
prompts: ["{{ q }}"]
default_test: { assert: [{ type: contains, value: echo }] }
tests:
${Array.from({ length: cases }, (_, i) => `  - { id: t${i}, vars: { q: "q${i}" } }`).join('\n')}
`;

const server = await startFakeServer(latencyMs);
const rows: string[] = [
  'workers  wall_s  ideal_s  wall/ideal  cpu_ms/case  over_local  follower  workers  w_start_ms  pg_ms  redis_ms  first_s  last_s  in_flight  pg_tx  f_pg_st  w_pg_st  f_pg_rt  w_pg_rt  f_rd_cmd  w_rd_cmd  exit',
];
const redisPid = await (async () => {
  const redis = new Redis(values.redis, { maxRetriesPerRequest: null });
  try {
    return Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
  } finally {
    redis.disconnect();
  }
})();
const redisCpu = (): number => {
  try {
    return cpuOf(redisPid);
  } catch {
    // Not on this machine's /proc (another host or container): not counted.
    return 0;
  }
};
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
    const counts = { follower: { pg: noCounts(), redis: noCounts() }, workers: { pg: noCounts(), redis: noCounts() } };
    const relays: TcpRelay[] = [];
    /** The store and Redis URLs a process of `side` is given: through a relay counting what it sends, with --wire. */
    const urlsFor = async (side: keyof typeof counts): Promise<Record<string, string>> => {
      const pgUrl = new URL(url);
      const redisUrl = new URL(values.redis);
      if (values.wire) {
        const pgRelay = await startTcpRelay('127.0.0.1', Number(pgUrl.port || 5432), () => ({
          fromClient: pgParser(counts[side].pg)(),
        }));
        const redisRelay = await startTcpRelay('127.0.0.1', Number(redisUrl.port || 6379), () => ({
          fromClient: respParser(counts[side].redis)(),
        }));
        relays.push(pgRelay, redisRelay);
        pgUrl.hostname = '127.0.0.1';
        pgUrl.port = String(pgRelay.port);
        redisUrl.hostname = '127.0.0.1';
        redisUrl.port = String(redisRelay.port);
      }
      return { PROCTOR_BENCH_PG: pgUrl.toString(), PROCTOR_BENCH_REDIS: redisUrl.toString() };
    };
    let measured: string[] | undefined;
    let wire: string[] = [];
    let code: number | null = null;
    try {
      writeFileSync(
        join(dir, 'proctor.toml'),
        `[store]\nurl = "\${PROCTOR_BENCH_PG}"\n[runner]\nkind = "queue"\n[runner.config]\nredis = "\${PROCTOR_BENCH_REDIS}"\npool = "${db}"\n`,
      );
      writeFileSync(join(dir, 'bench.eval.yaml'), evalText(server.url));
      const workerEnv = { ...process.env, ...(await urlsFor('workers')) };
      for (let i = 0; i < n; i++) {
        const worker = spawn(process.execPath, [...nodeArgs, cli, 'worker', '--concurrency', String(perWorker)], {
          cwd: dir,
          env: workerEnv,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        await new Promise<void>((resolve) => worker.stderr?.once('data', () => resolve()));
        workers.push(worker);
      }
      const before = workers.reduce((s, w) => s + cpuOf(w.pid as number), 0);
      const workerThreads = new Map<string, number>();
      for (const w of workers) addThreads(workerThreads, threadCpuOf(w.pid as number), -1);
      let follower = new Map<string, number>();
      // What the workers sent while starting is not the cases'.
      for (const c of [counts.workers.pg, counts.workers.redis]) Object.assign(c, noCounts());
      Object.assign(process.env, await urlsFor('follower'));
      const redisBefore = redisCpu();
      const spawnedAt = Date.now();
      let run: Awaited<ReturnType<typeof timeProctor>> | undefined;
      const pgCpu = await postgresCpu(db, async () => {
        const args = ['eval', 'run', '-q', '-j', String(n * perWorker), '-o', 'out'];
        const timed = async (): Promise<void> => {
          run = await timeProctor(dir, args, nodeArgs);
        };
        if (values.threads) follower = await followerThreads(timed);
        else await timed();
      });
      if (!run) throw new Error('the eval run did not run');
      const workerCpu = workers.reduce((s, w) => s + cpuOf(w.pid as number), 0) - before;
      if (values.threads) {
        for (const w of workers) addThreads(workerThreads, threadCpuOf(w.pid as number));
        const perCaseMs = (m: Map<string, number>): string =>
          [...m]
            .filter(([, s]) => s > 0)
            .sort((a, b) => b[1] - a[1])
            .map(([name, s]) => `${name} ${((s * 1000) / cases).toFixed(2)}`)
            .join(' | ');
        process.stderr.write(`${n} workers: CPU ms per case by thread: workers ${perCaseMs(workerThreads)}; `);
        process.stderr.write(`follower ${perCaseMs(follower)}\n`);
      }
      const redisMs = redisCpu() - redisBefore;
      const span = await inDatabase(url.toString(), (c) =>
        c.query<{ first: string; last: string; busy: string }>(
          'select min(started_at) as first, max(finished_at) as last, sum(finished_at - started_at) as busy from runs',
        ),
      );
      const { first, last, busy } = span.rows[0] ?? { first: '0', last: '0', busy: '0' };
      const times = await inDatabase(url.toString(), (c) =>
        c.query<Record<keyof CaseTimes, string>>(
          `select q.created_at as created, q.dispatched_at as dispatched, r.started_at as started,
                  r.finished_at as finished, r.owner_pid as pid from runs r join queue_runs q on q.run_id = r.run_id`,
        ),
      );
      const caseTimes = times.rows.map((r) => ({
        created: Number(r.created),
        dispatched: Number(r.dispatched),
        started: Number(r.started),
        finished: Number(r.finished),
        pid: Number(r.pid),
      }));
      process.stderr.write(`${n} workers: ${whereWallGoes(caseTimes, spawnedAt, n * perWorker)}\n`);
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
        perCase(redisMs).toFixed(2).padStart(8),
        sinceSpawn(first).padStart(7),
        sinceSpawn(last).padStart(6),
        (Number(busy) / Math.max(1, Number(last) - Number(first))).toFixed(1).padStart(9),
      ];
      const commandsOf = (c: WireCounts): number => [...c.commands.values()].reduce((a, b) => a + b, 0);
      wire = [
        counts.follower.pg.statements,
        counts.workers.pg.statements,
        counts.follower.pg.roundTrips,
        counts.workers.pg.roundTrips,
        commandsOf(counts.follower.redis),
        commandsOf(counts.workers.redis),
      ].map((k, i) => (k / cases).toFixed(2).padStart([7, 7, 7, 7, 8, 8][i] ?? 7));
      for (const side of ['follower', 'workers'] as const)
        for (const server of ['pg', 'redis'] as const)
          if (values.wire)
            process.stderr.write(
              `${side} ${server} per case: ${[...counts[side][server].commands]
                .sort((a, b) => b[1] - a[1])
                .map(([name, k]) => `${name} ${(k / cases).toFixed(3)}`)
                .join(' | ')}\n`,
            );
      if (values.again) {
        const warmBefore = workers.reduce((s, w) => s + cpuOf(w.pid as number), 0);
        const again = await timeProctor(
          dir,
          ['eval', 'run', '-q', '-j', String(n * perWorker), '-o', 'again'],
          nodeArgs,
        );
        const warm = workers.reduce((s, w) => s + cpuOf(w.pid as number), 0) - warmBefore;
        process.stderr.write(
          `${n} workers, the same eval again: workers ${perCase(warm).toFixed(2)} ms CPU per case (first run ${perCase(workerCpu).toFixed(2)}), follower ${perCase(again.cpuS).toFixed(2)}, wall ${again.wallS.toFixed(1)} s, exit ${again.code}\n`,
        );
      }
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
      await Promise.all(relays.map((r) => r.close()));
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
          [
            ...measured,
            (Number(tx.rows[0]?.n ?? 0) / cases).toFixed(1).padStart(5),
            ...wire,
            String(code).padStart(4),
          ].join('  '),
        );
      process.stderr.write(`${rows.at(-1)}\n`);
      await lobby((c) => c.query(`drop database if exists ${db} with (force)`));
      await dropPool(values.redis, db);
    }
  }
} finally {
  server.stop();
}
process.stdout.write(`${rows.join('\n')}\n`);
