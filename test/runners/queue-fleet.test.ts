// The queue runner end to end: `eval run` as the follower, `proctor worker` child processes, real Redis and
// PostgreSQL, the fake model over HTTP. Leases and stalled checks are a few seconds so failover is quick.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { packageInfo } from '../../src/package-info.js';
import { type CliProcess, otherInstall, runCli, startCli, waitFor } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { processRuns } from '../support/git-repo.js';
import { tempProject } from '../support/project.js';
import { queueProject, redisProblem, redisUrl, startWorker } from '../support/queue-fleet.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');
const unavailable = postgres?.unavailable ?? (await redisProblem());

interface Row {
  key: string;
  outcome: string;
}

describe.skipIf(unavailable !== undefined)(`queue runner across worker processes ${unavailable ?? ''}`, () => {
  let server: FakeModelServer;
  let db: BackendStore;
  const workers: CliProcess[] = [];

  beforeAll(async () => {
    server = await startFakeModelServer({ modelLatencyMs: { a: 300, b: 300 } });
    db = await (postgres as NonNullable<typeof postgres>).create();
  });
  afterAll(async () => {
    await server.close();
    await db.remove();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) w.child.kill('SIGKILL');
  });

  const target = (model: string, extra = '') =>
    `  - { label: ${model}, kind: openai, base_url: "${server.url}", model: ${model}, api_key: k${extra} }`;
  const evalFile = (targets: string[], tests: string[]) => `
targets:
${targets.join('\n')}
prompts: ["{{ q }}"]
default_test:
  assert: [{ type: contains, value: echo }]
tests:
${tests.map((q, i) => `  - { id: t${i}, vars: { q: "${q}" } }`).join('\n')}
`;
  const fleet = async (project: Parameters<typeof startWorker>[0], n: number, args: string[] = []) => {
    const started = await Promise.all(Array.from({ length: n }, () => startWorker(project, args)));
    workers.push(...started);
    return started;
  };
  const rows = (text: string): Row[] =>
    text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
  const query = async <T>(sql: string): Promise<T[]> => {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  };

  it('holds the global and per-target caps across 3 workers, each case executed once, the bundle whole', async () => {
    server.reset();
    const tag = `caps${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'a.eval.yaml': evalFile(
          [target('a'), target('b', ', max_concurrency: 2')],
          Array.from({ length: 10 }, (_, i) => `${tag}-${i} [[gate]]`),
        ),
      },
    });
    await fleet(project, 3, ['--concurrency', '4']);
    const follower = startCli(['eval', 'run', '-j', '5', '-o', 'out'], { cwd: project.dir, timeoutMs: 90_000 });
    // Every answer is held, so nothing ends and frees a slot: a work-conserving fleet fills the run's 5 slots,
    // more than one worker's 4, however slowly it gets there; taking turns with a, b stops at its cap of 2.
    await eventually(async () => (server.inFlight === 5 ? true : undefined), 60_000);
    expect(server.peakInFlightFor('b')).toBe(2);
    expect(server.peakInFlightFor('a')).toBe(3);
    server.openGate();
    const run = await follower.done;
    expect(run.code, run.stderr).toBe(0);
    // Never more than the caps, while held or after.
    expect(server.peakInFlight).toBe(5);
    expect(server.peakInFlightFor('b')).toBe(2);
    expect(server.countFor(tag)).toBe(20);
    const bundle = rows(project.read('out/index.jsonl'));
    expect(bundle).toHaveLength(20);
    expect(new Set(bundle.map((r) => r.key)).size).toBe(20);
    expect(JSON.parse(project.read('out/summary.json')).counts).toMatchObject({ total: 20, passed: 20 });
    const executions = await query<{ executions: number; superseded: number; worker: string }>(
      `select executions, superseded, worker from queue_runs where pool = '${project.pool}'`,
    );
    expect(executions).toHaveLength(20);
    expect(executions.every((e) => e.executions === 1 && e.superseded === 0)).toBe(true);
    expect(new Set(executions.map((e) => e.worker)).size).toBeGreaterThanOrEqual(2);
  });

  it("shares the fleet between two runs: the second's cases go ahead of the first's excess, and neither stops", async () => {
    server.reset();
    const tag = `fair${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'a.eval.yaml': evalFile(
          [target('a')],
          Array.from({ length: 30 }, (_, i) => `${tag}-a-${i}`),
        ),
        'b.eval.yaml': evalFile(
          [target('b')],
          Array.from({ length: 3 }, (_, i) => `${tag}-b-${i}`),
        ),
      },
    });
    // Two slots in all; the first run asks for more than the fleet has.
    await fleet(project, 1, ['--concurrency', '2']);
    const first = startCli(['eval', 'run', 'a.eval.yaml', '-j', '6', '-o', 'first'], {
      cwd: project.dir,
      timeoutMs: 90_000,
    });
    await eventually(async () => (requestsFor(`${tag}-a-`).length > 0 ? true : undefined));
    const second = await runCli(['eval', 'run', 'b.eval.yaml', '-j', '2', '-o', 'second'], {
      cwd: project.dir,
      timeoutMs: 90_000,
    });
    expect(second.code, second.stderr).toBe(0);
    const done = await first.done;
    expect(done.code, done.stderr).toBe(0);
    const starts = (part: string) => requestsFor(`${tag}-${part}-`).map((r) => r.at);
    expect(starts('a')).toHaveLength(30);
    expect(starts('b')).toHaveLength(3);
    const [{ submitted }] = (await query<{ submitted: string }>(
      `select min(r.created_at) as submitted from runs r join instances i on i.instance_id = r.instance_id
        where i.spec like '%${tag}-b-%'`,
    )) as [{ submitted: string }];
    const [bFirst, bLast] = [Math.min(...starts('b')), Math.max(...starts('b'))];
    // The first run's four jobs beyond the fleet's two slots do not go ahead of the second run's: at most the
    // cases already being fetched start between its submit and its first case.
    expect(starts('a').filter((at) => at > Number(submitted) && at < bFirst).length).toBeLessThanOrEqual(2);
    // And the first run is not stopped meanwhile: one of its cases starts while the second's are running.
    expect(starts('a').some((at) => at > bFirst && at <= bLast)).toBe(true);
  });

  /** The run executing the case whose prompt holds `text`, as the store has it now. */
  const runFor = async (text: string) => {
    const [run] = await query<{ run_id: string; status: string; pid: number | null }>(
      `select r.run_id, r.status, r.owner_pid as pid from runs r join instances i on i.instance_id = r.instance_id
        where i.spec like '%${text}%'`,
    );
    return run as { run_id: string; status: string; pid: number | null };
  };
  const executionsOf = async (runId: string) =>
    (
      await query<{ epoch: number; executions: number; superseded: number }>(
        `select epoch, executions, superseded from queue_runs where run_id = '${runId}'`,
      )
    )[0];
  const requestsFor = (text: string) => server.requests.filter((r) => r.prompt.includes(text));

  /** One case, `${tag}-x` with `directives`, followed on `workers` new workers: once the fake model has its request. */
  const oneCaseStarted = async (tag: string, directives: string, workers: number) => {
    const project = queueProject({
      storeUrl: db.url,
      files: { 'a.eval.yaml': evalFile([target('a')], [`${tag}-x ${directives}`]) },
    });
    const started = await fleet(project, workers);
    const follower = startCli(['eval', 'run', '-o', 'out'], { cwd: project.dir, timeoutMs: 60_000 });
    await eventually(async () => (requestsFor(`${tag}-x`).length === 1 ? true : undefined));
    const { run_id: runId } = await runFor(`${tag}-x`);
    return { project, follower, runId, started };
  };

  /**
   * SIGKILLs the worker executing `${tag}-x` once the fake model has its request (`check` sees the pid first),
   * waits for the follower to succeed, and checks X was requested again within lock 3 s + stalled check 1 s,
   * with 2 s of slack for the check's phase. Returns X's run id.
   */
  const killExecutorOfX = async (tag: string, follower: CliProcess, check?: (pid: number) => Promise<void>) => {
    await eventually(async () => (requestsFor(`${tag}-x`).length === 1 ? true : undefined));
    const { run_id: runId, pid } = await eventually(async () => {
      const run = await runFor(`${tag}-x`);
      return run.status === 'RUNNING' ? run : undefined;
    });
    await check?.(pid as number);
    const killedAt = Date.now();
    process.kill(pid as number, 'SIGKILL');
    const result = await follower.done;
    expect(result.code, result.stderr).toBe(0);
    const [, again] = requestsFor(`${tag}-x`);
    expect((again?.at ?? Number.POSITIVE_INFINITY) - killedAt).toBeLessThan(3000 + 1000 + 2000);
    return runId;
  };

  it("serves only its --pool: pool B's worker leaves pool A's cases waiting and runs B's; A's run ends on A's worker", async () => {
    server.reset();
    const tag = `pool${Date.now()}`;
    const files = {
      'a.eval.yaml': evalFile([target('a')], [`${tag}-a0`, `${tag}-a1`]),
      'b.eval.yaml': evalFile([target('a')], [`${tag}-b0`, `${tag}-b1`]),
    };
    const a = queueProject({ storeUrl: db.url, files });
    const b = queueProject({ storeUrl: db.url, files });
    // Started in A's checkout: only --pool makes it B's worker.
    const [bWorker] = await fleet(a, 1, ['--pool', b.pool]);
    const follower = startCli(['eval', 'run', 'a.eval.yaml', '-o', 'out'], { cwd: a.dir, timeoutMs: 60_000 });
    const dispatched = async (pool: string) =>
      (
        await query<{ n: number }>(
          `select count(*)::int as n from queue_runs where pool = '${pool}' and state = 'dispatched'`,
        )
      )[0]?.n;
    // A's jobs wait in Redis before B's run is even submitted: a worker taking pool A's jobs would start them.
    await eventually(async () => ((await dispatched(a.pool)) === 2 ? true : undefined));
    const other = await runCli(['eval', 'run', 'b.eval.yaml', '-o', 'out'], { cwd: b.dir, timeoutMs: 60_000 });
    expect(other.code, other.stderr).toBe(0);
    expect(requestsFor(`${tag}-b`)).toHaveLength(2);
    expect(requestsFor(`${tag}-a`)).toHaveLength(0);
    expect(await dispatched(a.pool)).toBe(2);
    const [aWorker] = await fleet(a, 1);
    const done = await follower.done;
    expect(done.code, done.stderr).toBe(0);
    expect(requestsFor(`${tag}-a`)).toHaveLength(2);
    const ran = await query<{ pool: string; worker: string }>(
      `select pool, worker from queue_runs where pool in ('${a.pool}', '${b.pool}')`,
    );
    const pidOf = (w: string) => Number(w.split(':').at(-2));
    expect(ran.filter((r) => r.pool === b.pool).map((r) => pidOf(r.worker))).toEqual([
      bWorker?.child.pid,
      bWorker?.child.pid,
    ]);
    expect(ran.filter((r) => r.pool === a.pool).map((r) => pidOf(r.worker))).toEqual([
      aWorker?.child.pid,
      aWorker?.child.pid,
    ]);
    a.remove();
    b.remove();
  });

  it("re-runs a SIGKILLed worker's case on another worker within lock + stalled interval: one committed result", async () => {
    server.reset();
    const tag = `kill${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'a.eval.yaml': evalFile(
          [target('a')],
          [`${tag}-x [[hang times:1]]`, ...Array.from({ length: 5 }, (_, i) => `${tag}-${i}`)],
        ),
      },
    });
    // One case per worker: the killed worker held X alone, so every other case runs exactly once.
    await fleet(project, 2, ['--concurrency', '1']);
    const follower = startCli(['eval', 'run', '-o', 'out'], { cwd: project.dir, timeoutMs: 60_000 });
    const runId = await killExecutorOfX(tag, follower);
    expect(requestsFor(`${tag}-x`)).toHaveLength(2);
    for (let i = 0; i < 5; i++) expect(requestsFor(`${tag}-${i}`)).toHaveLength(1);
    expect(await executionsOf(runId)).toEqual({ epoch: 2, executions: 2, superseded: 0 });
    const bundle = rows(project.read('out/index.jsonl'));
    expect(bundle).toHaveLength(6);
    expect(bundle.every((r) => r.outcome === 'passed')).toBe(true);
  });

  it('re-runs a case its dead worker took on from its own commit (no job of its own) on another worker', async () => {
    server.reset();
    const tag = `chain${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: { 'a.eval.yaml': evalFile([target('a')], [`${tag}-0`, `${tag}-x [[hang times:1]]`]) },
    });
    await fleet(project, 2, ['--concurrency', '1']);
    // One case at a time: the first case's commit hands the slot to X, which its worker executes next.
    const follower = startCli(['eval', 'run', '-j', '1', '-o', 'out'], { cwd: project.dir, timeoutMs: 60_000 });
    const runId = await killExecutorOfX(tag, follower, async (pid) => {
      const [first] = await query<{ pid: number }>(
        `select r.owner_pid as pid from runs r join instances i on i.instance_id = r.instance_id
          where i.spec like '%${tag}-0%'`,
      );
      expect(first?.pid).toBe(pid);
    });
    expect(await executionsOf(runId)).toEqual({ epoch: 2, executions: 2, superseded: 0 });
    expect(rows(project.read('out/index.jsonl')).map((r) => r.outcome)).toEqual(['passed', 'passed']);
  });

  it("refuses a blocked worker's late commit once another worker has taken the case over", async () => {
    server.reset();
    const tag = `block${Date.now()}`;
    const { project, follower, runId, started } = await oneCaseStarted(tag, '[[latency:1500]]', 1);
    const [blocked] = started;
    // A stopped process is a blocked event loop: it renews no lease and its lock lapses.
    blocked?.child.kill('SIGSTOP');
    try {
      await fleet(project, 1);
      const result = await follower.done;
      expect(result.code, result.stderr).toBe(0);
    } finally {
      blocked?.child.kill('SIGCONT');
    }
    // Its answer arrived while it was stopped: it finishes the case, and its commit is refused.
    await eventually(async () => ((await executionsOf(runId))?.superseded === 1 ? true : undefined));
    expect(await executionsOf(runId)).toEqual({ epoch: 2, executions: 2, superseded: 1 });
    expect((await runFor(`${tag}-x`)).status).toBe('COMPLETED');
    const show = await runCli(['runs', 'show', runId], { cwd: project.dir });
    expect(show.stdout).toMatch(/executions: 2 \(1 superseded\)/);
  });

  it('acknowledges a second delivery of a finished case without calling the target', async () => {
    server.reset();
    const tag = `dup${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: { 'a.eval.yaml': evalFile([target('a')], [`${tag}-x`]) },
    });
    await fleet(project, 1);
    const run = await runCli(['eval', 'run', '-o', 'out'], { cwd: project.dir, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const { run_id: runId } = await runFor(`${tag}-x`);
    const { Queue } = await import('bullmq');
    const queue = new Queue(`proctor-${project.pool}`, { connection: { host: '127.0.0.1', port: 6379 } });
    try {
      // Kept once finished, so its return value can be read here.
      const job = await queue.add('case', { v: 1, runId }, { jobId: `again-${Date.now()}`, removeOnComplete: false });
      const finished = await eventually(async () => {
        const seen = await queue.getJob(job.id as string);
        return seen?.finishedOn ? seen : undefined;
      });
      expect(finished.returnvalue).toBe('duplicate');
      expect(finished.data).toEqual({ v: 1, runId });
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
    expect(requestsFor(`${tag}-x`)).toHaveLength(1);
    expect(await executionsOf(runId)).toEqual({ epoch: 1, executions: 1, superseded: 0 });
  });

  it('holds back a delivery of a case that is executing, then acknowledges it: the target is called once', async () => {
    server.reset();
    const tag = `dupl${Date.now()}`;
    const { project, follower, runId } = await oneCaseStarted(tag, '[[latency:2000]]', 2);
    const { Queue } = await import('bullmq');
    const { createHash } = await import('node:crypto');
    const queue = new Queue(`proctor-${project.pool}`, { connection: { host: '127.0.0.1', port: 6379 } });
    try {
      // The same job again (its id is the run's and its dispatch number's): BullMQ keeps the one it has.
      const sameId = `r-${createHash('sha256').update(runId).digest('hex').slice(0, 32)}-1`;
      await queue.add('case', { v: 1, runId }, { jobId: sameId });
      // A second job for the same attempt, delivered to the idle worker while the first still executes.
      const job = await queue.add('case', { v: 1, runId }, { jobId: `again-${Date.now()}`, removeOnComplete: false });
      const finished = await eventually(async () => {
        const seen = await queue.getJob(job.id as string);
        return seen?.finishedOn ? seen : undefined;
      });
      expect(finished.returnvalue).toBe('duplicate');
      const result = await follower.done;
      expect(result.code, result.stderr).toBe(0);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
    expect(requestsFor(`${tag}-x`)).toHaveLength(1);
    expect(await executionsOf(runId)).toEqual({ epoch: 1, executions: 1, superseded: 0 });
  });

  // The 2 s of the issue run from when the cancel is recorded in the store (a CLI's start on a loaded machine is
  // no part of it) to when the fake model sees the connection close: a worker notices on its next lease tick.
  const cancelAsked = async (where: string): Promise<number> => {
    const [row] = await query<{ at: string | null }>(
      `select min(r.cancel_requested_at) as at from runs r join queue_runs q using (run_id) where ${where}`,
    );
    return Number(row?.at ?? Number.NaN);
  };

  it('cancels from a third process and on Ctrl-C: queued cases never start, running ones abort within 2 s', async () => {
    server.reset();
    const tag = `cancel${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'a.eval.yaml': evalFile(
          [target('a')],
          Array.from({ length: 8 }, (_, i) => `${tag}-${i} [[hang]]`),
        ),
      },
    });
    await fleet(project, 2, ['--concurrency', '2']);
    const follower = startCli(['eval', 'run', '-j', '4', '-o', 'out'], { cwd: project.dir, timeoutMs: 60_000 });
    await eventually(async () => (server.inFlight === 4 ? true : undefined));
    const [running] = await query<{ run_id: string }>(
      `select run_id from runs r join queue_runs q using (run_id) where q.pool = '${project.pool}' and r.status = 'RUNNING' limit 1`,
    );
    const runId = (running as { run_id: string }).run_id;
    const spec = (
      await query<{ spec: string }>(
        `select i.spec from runs r join instances i using (instance_id) where r.run_id = '${runId}'`,
      )
    )[0]?.spec as string;
    const prompt = requestsFor(tag).find((r) => spec.includes(r.prompt.slice(0, r.prompt.indexOf(' '))));
    const cancel = await runCli(['runs', 'cancel', runId], { cwd: project.dir });
    expect(cancel.code, cancel.stdout + cancel.stderr).toBe(0);
    expect(cancel.stdout).toContain('CANCELED');
    const closed = await eventually(async () => prompt?.endedAt);
    expect(closed - (await cancelAsked(`r.run_id = '${runId}'`))).toBeLessThan(2000);
    // Its slot went to the next queued case.
    await eventually(async () => (requestsFor(tag).length === 5 && server.inFlight === 4 ? true : undefined));

    follower.child.kill('SIGINT');
    await eventually(async () => (server.inFlight === 0 ? true : undefined));
    const result = await follower.done;
    expect(result.code, result.stderr).toBe(130);
    const lastClosed = Math.max(...requestsFor(tag).map((r) => r.endedAt ?? Number.POSITIVE_INFINITY));
    const interrupted = await cancelAsked(`q.pool = '${project.pool}' and r.run_id <> '${runId}'`);
    expect(lastClosed - interrupted).toBeLessThan(2000);
    const statuses = await query<{ status: string; n: number }>(
      `select r.status, count(*)::int as n from runs r join queue_runs q using (run_id) where q.pool = '${project.pool}' group by r.status`,
    );
    expect(statuses).toEqual([{ status: 'CANCELED', n: 8 }]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(requestsFor(tag)).toHaveLength(5);
  });

  it("cancel kills a CLI agent's whole process group on its worker", async () => {
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'a.eval.yaml': `targets: [{ label: agent, kind: cli, command: "sleep 60 & echo $! > agent.pid; wait" }]
prompts: [hi]
tests: [{ id: one }]
`,
      },
    });
    await fleet(project, 1);
    const follower = startCli(['eval', 'run', '-o', 'out'], { cwd: project.dir, timeoutMs: 60_000 });
    // The agent's own child: only a kill of the whole group reaches it.
    const child = await eventually(async () => {
      const pid = project.exists('agent.pid') ? Number(project.read('agent.pid').trim()) : 0;
      return pid > 0 ? pid : undefined;
    });
    expect(processRuns(child)).toBe(true);
    const [running] = await query<{ run_id: string }>(`select run_id from queue_runs where pool = '${project.pool}'`);
    const cancel = await runCli(['runs', 'cancel', (running as { run_id: string }).run_id], { cwd: project.dir });
    expect(cancel.code, cancel.stdout + cancel.stderr).toBe(0);
    expect(cancel.stdout).toContain('CANCELED');
    await eventually(async () => (processRuns(child) ? undefined : true));
    const result = await follower.done;
    expect(result.code, result.stderr).toBe(1);
  });

  it('drains on SIGTERM: after --drain-timeout the running case goes back and restarts on another worker at once', async () => {
    server.reset();
    const tag = `drain${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      lockMs: 30_000,
      files: { 'a.eval.yaml': evalFile([target('a')], [`${tag}-x [[latency:4000]]`]) },
    });
    const [first] = await fleet(project, 1, ['--drain-timeout', '1']);
    const follower = startCli(['eval', 'run', '-o', 'out'], { cwd: project.dir, timeoutMs: 60_000 });
    await eventually(async () => (requestsFor(`${tag}-x`).length === 1 ? true : undefined));
    await fleet(project, 1);
    const termAt = Date.now();
    first?.child.kill('SIGTERM');
    const exited = await first?.done;
    expect(exited?.code, exited?.stderr).toBe(143);
    await eventually(async () => (requestsFor(`${tag}-x`).length === 2 ? true : undefined));
    // Far below the 30 s lock: the release sent a fresh job instead of waiting for the lock to lapse.
    expect((requestsFor(`${tag}-x`)[1]?.at as number) - termAt).toBeLessThan(1000 + 2000);
    expect(requestsFor(`${tag}-x`)[0]?.endedAt).toBeDefined();
    const result = await follower.done;
    expect(result.code, result.stderr).toBe(0);
    const { run_id: runId } = await runFor(`${tag}-x`);
    expect(await executionsOf(runId)).toMatchObject({ executions: 2, superseded: 0 });
    expect(rows(project.read('out/index.jsonl'))).toHaveLength(1);
  });

  it('drains on SIGINT with time to spare: the case finishes there, exit 130; a second SIGTERM exits at once', async () => {
    server.reset();
    const tag = `finish${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'a.eval.yaml': evalFile([target('a')], [`${tag}-x [[latency:1500]]`]),
        'b.eval.yaml': evalFile([target('a')], [`${tag}-y [[latency:20000]]`]),
      },
    });
    const [worker] = await fleet(project, 1);
    const follower = startCli(['eval', 'run', 'a.eval.yaml', '-o', 'out'], { cwd: project.dir, timeoutMs: 60_000 });
    await eventually(async () => (requestsFor(`${tag}-x`).length === 1 ? true : undefined));
    // SIGINT here, SIGTERM below and in the test above: both signals drain.
    worker?.child.kill('SIGINT');
    const exited = await worker?.done;
    expect(exited?.stderr).toContain('SIGINT: draining');
    expect(exited?.code, exited?.stderr).toBe(130);
    const result = await follower.done;
    expect(result.code, result.stderr).toBe(0);
    expect(requestsFor(`${tag}-x`)).toHaveLength(1);
    expect(await executionsOf((await runFor(`${tag}-x`)).run_id)).toEqual({ epoch: 1, executions: 1, superseded: 0 });

    const [again] = await fleet(project, 1);
    const slow = startCli(['eval', 'run', 'b.eval.yaml', '-o', 'slow'], { cwd: project.dir, timeoutMs: 60_000 });
    await eventually(async () => (requestsFor(`${tag}-y`).length === 1 ? true : undefined));
    again?.child.kill('SIGTERM');
    await waitFor(() => again?.stderr().includes('draining') ?? false);
    const secondAt = Date.now();
    again?.child.kill('SIGTERM');
    const gone = await again?.done;
    expect(gone?.code).toBe(143);
    expect(Date.now() - secondAt).toBeLessThan(1500);
    slow.child.kill('SIGKILL');
  });

  /** Every value Redis holds under the keys matching `pattern`, by key, as text. */
  const redisContent = async (pattern: string): Promise<Map<string, string>> => {
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisUrl);
    try {
      const content = new Map<string, string>();
      for (const key of await redis.keys(pattern)) {
        const type = await redis.type(key);
        const value =
          type === 'hash'
            ? await redis.hgetall(key)
            : type === 'string'
              ? await redis.get(key)
              : type === 'list'
                ? await redis.lrange(key, 0, -1)
                : type === 'zset'
                  ? await redis.zrange(key, 0, -1)
                  : type === 'set'
                    ? await redis.smembers(key)
                    : type === 'stream'
                      ? await redis.xrange(key, '-', '+')
                      : type;
        content.set(key, JSON.stringify(value));
      }
      return content;
    } finally {
      redis.disconnect();
    }
  };

  it('puts ids only in Redis, and a worker calls the target with the key from its own environment', async () => {
    server.reset();
    const tag = `ids${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'a.eval.yaml': `
targets: [{ label: a, kind: openai, base_url: "${server.url}", model: a, api_key: "\${FLEET_KEY}" }]
prompts: ["{{ q }}"]
default_test: { assert: [{ type: contains, value: echo }] }
tests: [{ id: t0, vars: { q: "${tag}-0" } }, { id: t1, vars: { q: "${tag}-1" } }]
`,
      },
    });
    const detached = await runCli(['eval', 'run', '--detach', '-o', 'out'], {
      cwd: project.dir,
      env: { FLEET_KEY: 'submitter-secret-4821' },
    });
    expect(detached.code, detached.stderr).toBe(0);
    // No worker yet: both cases wait in Redis as jobs.
    const content = await redisContent(`bull:proctor-${project.pool}:*`);
    const jobs = [...content].filter(([key]) => /:r-[0-9a-f]{32}-\d+$/.test(key));
    expect(jobs).toHaveLength(2);
    for (const [, job] of jobs) {
      expect(Object.keys(JSON.parse((JSON.parse(job) as { data: string }).data))).toEqual(['v', 'runId']);
    }
    const everything = [...content.values()].join('\n');
    expect(everything).not.toContain(tag);
    expect(everything).not.toContain('submitter-secret-4821');

    workers.push(await startWorker(project, [], { FLEET_KEY: 'worker-secret-7765' }));
    const followed = await runCli(['runs', 'follow', detached.stdout.trim(), '-q'], {
      cwd: project.dir,
      timeoutMs: 30_000,
    });
    expect(followed.code, followed.stderr).toBe(0);
    expect(requestsFor(tag).map((r) => r.headers.authorization)).toEqual([
      'Bearer worker-secret-7765',
      'Bearer worker-secret-7765',
    ]);
    const [stored] = await query<{ text: string }>(
      `select string_agg(i.spec || i.context || r.metadata || q.work, '') as text
         from runs r join instances i using (instance_id) join queue_runs q using (run_id)`,
    );
    expect(stored?.text).toContain(tag);
    expect(stored?.text).not.toContain('submitter-secret-4821');
  });

  it('a follower killed with SIGKILL: the workers finish its run, and `results pull` completes its bundle', async () => {
    server.reset();
    const tag = `orphan${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'a.eval.yaml': evalFile(
          [target('a')],
          Array.from({ length: 6 }, (_, i) => `${tag}-${i} [[latency:300]]`),
        ),
      },
    });
    await fleet(project, 1, ['--concurrency', '2']);
    const follower = startCli(['eval', 'run', '-o', 'out'], { cwd: project.dir, timeoutMs: 60_000 });
    await eventually(async () => (requestsFor(tag).length > 0 ? true : undefined));
    follower.child.kill('SIGKILL');
    await follower.done;
    const groupId = (/run (\S+): /.exec(follower.stderr()) as RegExpExecArray)[1] as string;
    await eventually(async () => {
      const [done] = await query<{ n: number }>(
        `select count(*)::int as n from runs where group_id = '${groupId}' and status = 'COMPLETED'`,
      );
      return done?.n === 6 ? true : undefined;
    }, 60_000);
    const pulled = await runCli(['results', 'pull', groupId], { cwd: project.dir });
    expect(pulled.code, pulled.stderr).toBe(0);
    const bundle = rows(project.read('out/index.jsonl'));
    expect(bundle).toHaveLength(6);
    expect(bundle.every((r) => r.outcome === 'passed')).toBe(true);
    expect(JSON.parse(project.read('out/summary.json')).counts).toMatchObject({ total: 6, passed: 6 });
    for (let i = 0; i < 6; i++) expect(requestsFor(`${tag}-${i} `)).toHaveLength(1);
  });

  it('detaches (prints the run id, exit 0) and `runs follow` re-attaches until the run ends', async () => {
    server.reset();
    const tag = `detach${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: { 'a.eval.yaml': evalFile([target('a')], [`${tag}-0`, `${tag}-1`, `${tag}-2`]) },
    });
    const detached = await runCli(['eval', 'run', '--detach', '-o', 'out'], { cwd: project.dir });
    expect(detached.code, detached.stderr).toBe(0);
    const groupId = detached.stdout.trim();
    expect(detached.stderr).toContain(`proctor runs follow ${groupId}`);
    expect(requestsFor(tag)).toHaveLength(0);
    await fleet(project, 1, ['--concurrency', '3']);
    const followed = await runCli(['runs', 'follow', groupId, '-q'], { cwd: project.dir, timeoutMs: 30_000 });
    // On a failure, what each case ended with (the bundle is pulled before the exit code is decided).
    const ended = (): string => {
      try {
        return project.read('out/index.jsonl');
      } catch {
        return '(no bundle)';
      }
    };
    if (followed.code !== 0)
      expect.fail(`runs follow exited ${followed.code}\n${followed.stdout}\n${followed.stderr}\n${ended()}`);
    expect(followed.stdout).toContain(`${groupId}: 3/3 done · 3 passed`);
    expect(rows(project.read('out/index.jsonl'))).toHaveLength(3);
  });

  it('runs `task run` through the workers unchanged, and refuses --keep it cannot honour (exit 2)', async () => {
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'hello.task.yaml': `
id: hello
steps:
  - { id: say, type: exec, command: echo hello from a worker }
  - { id: check, type: verify, verifier_id: v, input: say, assert: [{ type: contains, value: hello }] }
`,
      },
    });
    const kept = await runCli(['task', 'run', 'hello.task.yaml', '--keep'], { cwd: project.dir });
    expect(kept.code).toBe(2);
    expect(kept.stderr).toContain('--keep cannot be honoured by runner kind "queue"');
    expect(kept.stderr).toContain('fix:');
    await fleet(project, 1);
    const run = await runCli(['task', 'run', 'hello.task.yaml', '--output-dir', 'out'], {
      cwd: project.dir,
      timeoutMs: 30_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('hello from a worker');
  });

  it("fails a case with setup_failed naming the file when a worker's checkout differs from the submitter's", async () => {
    const files = {
      'agents/echo.js': 'process.stdout.write("echo: " + process.argv[2]);\n',
      'a.eval.yaml': `targets:\n  - { label: agent, kind: cli, command: "node agents/echo.js {{ prompt }}" }\nprompts: [hi]\ntests: [{ id: one, assert: [{ type: contains, value: echo }] }]\n`,
    };
    const submitter = queueProject({ storeUrl: db.url, files });
    const elsewhere = tempProject({
      ...files,
      'proctor.toml': submitter.read('proctor.toml'),
      'agents/echo.js': 'process.stdout.write("changed: " + process.argv[2]);\n',
    });
    try {
      await fleet(elsewhere, 1);
      const run = await runCli(['eval', 'run', '-o', 'out'], { cwd: submitter.dir, timeoutMs: 30_000 });
      expect(run.code, run.stderr).toBe(1);
      const [row] = rows(submitter.read('out/index.jsonl')) as (Row & { error: { kind: string; message: string } })[];
      expect(row?.outcome).toBe('error');
      expect(row?.error.kind).toBe('setup_failed');
      expect(row?.error.message).toContain('project file agents/echo.js differs');
    } finally {
      elsewhere.remove();
    }
  });

  it("fails a case with setup_failed naming both versions when a worker's Proctor is not the submitter's", async () => {
    server.reset();
    const tag = `version${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: { 'a.eval.yaml': evalFile([target('a')], [`${tag}-0`, `${tag}-1`]) },
    });
    const other = otherInstall('0.0.0-other');
    try {
      workers.push(await startWorker(project, [], {}, other.cli));
      const run = await runCli(['eval', 'run', '-o', 'out'], { cwd: project.dir, timeoutMs: 30_000 });
      expect(run.code, run.stderr).toBe(1);
      const bundle = rows(project.read('out/index.jsonl')) as (Row & { error: { kind: string; message: string } })[];
      expect(bundle).toHaveLength(2);
      for (const row of bundle) {
        expect(row.outcome).toBe('error');
        expect(row.error.kind).toBe('setup_failed');
        expect(row.error.message).toContain(
          `this worker runs Proctor 0.0.0-other and the run was submitted with Proctor ${packageInfo().version}`,
        );
      }
      // Refused before its task started: the model was never asked.
      expect(server.countFor(tag)).toBe(0);
    } finally {
      other.remove();
    }
  });

  it('--rerun-failed and --resume work on queue runs as on local ones', async () => {
    server.reset();
    const tag = `rerun${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'a.eval.yaml': `
targets: [{ label: a, kind: openai, base_url: "${server.url}", model: a, api_key: k }]
prompts: ["{{ q }}"]
tests:
  - { id: good, vars: { q: "${tag}-good" }, assert: [{ type: contains, value: echo }] }
  - { id: bad, vars: { q: "${tag}-bad" }, assert: [{ type: contains, value: nowhere }] }
`,
      },
    });
    await fleet(project, 1);
    const first = await runCli(['eval', 'run', '-o', 'out'], { cwd: project.dir, timeoutMs: 30_000 });
    expect(first.code, first.stderr).toBe(1);
    const rerun = await runCli(['eval', 'run', '--rerun-failed', 'out'], { cwd: project.dir, timeoutMs: 30_000 });
    expect(rerun.code, rerun.stderr).toBe(1);
    expect(requestsFor(`${tag}-good`)).toHaveLength(1);
    expect(requestsFor(`${tag}-bad`)).toHaveLength(2);
    const resumed = await runCli(['eval', 'run', '--resume', 'out'], { cwd: project.dir, timeoutMs: 30_000 });
    expect(resumed.stderr).toContain('nothing to run');
    expect(rows(project.read('out/index.jsonl'))).toHaveLength(3);
  });
});

describe('a queue runner over a SQLite store', () => {
  it('is refused with exit 2 at its line of proctor.toml, with a fix, by eval run, task run and worker', async () => {
    const project = tempProject({
      'proctor.toml': '[runner]\nkind = "queue"\n',
      'a.eval.yaml': 'targets: [{ label: e, kind: echo }]\nprompts: [hi]\ntests: [{ id: one }]\n',
      'hello.task.yaml': 'id: hello\nsteps:\n  - { id: say, type: exec, command: echo hello }\n',
    });
    try {
      for (const args of [['eval', 'run'], ['task', 'run', 'hello.task.yaml'], ['worker']]) {
        const run = await runCli(args, { cwd: project.dir });
        expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
        expect(run.stderr).toContain('proctor.toml:2:1');
        expect(run.stderr).toContain('cannot reach a SQLite store');
        expect(run.stderr).toContain('fix: set [store] url = "postgres://');
      }
      expect(project.exists('.proctor')).toBe(false);
    } finally {
      project.remove();
    }
  });
});
