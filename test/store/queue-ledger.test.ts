// A queue worker's commit ends its run and records its case's result in one epoch-fenced statement, as the local
// runner's finish does: committed under the current epoch or not at all.
import { CamelCasePlugin, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { preparingPool } from '../../src/store/named-statements.js';
import { type Claim, type DispatchCandidate, QueueLedger } from '../../src/store/queue-ledger.js';
import { Reconnect } from '../../src/store/reconnect.js';
import type { Database } from '../../src/store/schema.js';
import type { NewRun, RunFinish, RunOwner, Store } from '../../src/store/store.js';
import { newRun, readRun } from '../support/run-records.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');
const owner: RunOwner = { host: 'h', pid: 1, startedAt: 1000 };
const now = 5_000_000_000_000;

// Each run in a group of its own: a commit hands its freed slot to nothing.
const queued = (runId: string): NewRun => ({
  ...newRun(runId),
  groupId: runId,
  queue: { pool: 'ledger', limits: [], work: {} },
});
const finish = (runId: string, attempt = 1): RunFinish => ({
  status: 'COMPLETED',
  outcome: 'passed',
  score: 1,
  result: {
    caseKey: `k-${runId}`,
    attempt,
    target: 'model',
    evalPath: 'a.eval.yaml',
    row: { key: `k-${runId}`, outcome: 'passed', score: 1, group_id: runId, error: null },
    files: {},
  },
});
const epochOf = (claim: Claim): number => {
  if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
  return claim.epoch;
};

describe.skipIf(postgres?.unavailable !== undefined)('queue ledger commit (postgres)', () => {
  let temp: BackendStore;
  let store: Store;
  beforeEach(async () => {
    temp = await (postgres as NonNullable<typeof postgres>).create();
    store = temp.store;
  });
  afterEach(() => temp.remove());

  const results = async (runId: string) => (await store.readResults(runId, 0, 10)).map((r) => r.runId);

  it('commits the result under the current epoch, and nothing when refused', async () => {
    await store.createRuns([queued('r1'), queued('r2')]);
    const ledger = store.queueLedger();
    const epoch = epochOf(await ledger.claim('r1', 'w1', owner, now, 60_000));
    expect(await ledger.commit('r1', epoch, finish('r1'), now + 10)).toEqual({ committed: true, queued: true });
    expect(await results('r1')).toEqual(['r1']);

    // w1's lease lapses and w2 takes r2 over: w1's late commit is refused.
    const stale = epochOf(await ledger.claim('r2', 'w1', owner, now, 1000));
    const current = epochOf(await ledger.claim('r2', 'w2', owner, now + 2000, 60_000));
    expect(await ledger.commit('r2', stale, finish('r2'), now + 3000)).toEqual({ committed: false });
    expect(await results('r2')).toEqual([]);
    expect((await readRun(store, 'r2')).status).toBe('RUNNING');
    expect((await ledger.stats('r2'))?.superseded).toBe(1);
    // The holder of the current epoch commits.
    expect((await ledger.commit('r2', current, finish('r2'), now + 4000)).committed).toBe(true);
    expect(await results('r2')).toEqual(['r2']);
    // A retry of that commit (its answer lost with the connection) changes nothing and fails nothing.
    expect((await ledger.commit('r2', current, finish('r2'), now + 4000)).committed).toBe(false);
    expect(await results('r2')).toEqual(['r2']);
  });

  it('fails a commit the database refuses as a whole: no status, no result, the lease kept', async () => {
    await store.createRuns([queued('r3')]);
    const ledger = store.queueLedger();
    const epoch = epochOf(await ledger.claim('r3', 'w1', owner, now, 60_000));
    // An attempt number past the results table's integer column.
    await expect(ledger.commit('r3', epoch, finish('r3', 2 ** 40), now + 10)).rejects.toThrow(/out of range/);
    expect(await results('r3')).toEqual([]);
    expect((await readRun(store, 'r3')).status).toBe('RUNNING');
    expect(await ledger.renew(['r3'], 'w1', now + 20, 60_000)).toEqual({ held: ['r3'], cancel: [] });
    // The worker then ends the run FAILED under the same claim, as executeRun does after a failed finish.
    const failed: RunFinish = { status: 'FAILED', outcome: 'error' };
    expect((await ledger.commit('r3', epoch, failed, now + 30)).committed).toBe(true);
    expect((await readRun(store, 'r3')).status).toBe('FAILED');
  });

  it("hands a freed slot to its group's oldest queued run through the group's index, scanning no table", async () => {
    // A group of a thousand queued cases, as a large eval keeps: a scan of every queued run would cost each
    // commit more the larger the run (and PostgreSQL's CPU is the fleet's, on the workers' machines or not).
    const runs = Array.from({ length: 1000 }, (_, i) => ({
      ...queued(`g${String(i).padStart(4, '0')}`),
      groupId: 'g',
    }));
    await store.createRuns(runs);
    const epoch = epochOf(await store.queueLedger().claim('g0000', 'w1', owner, now, 60_000));
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: temp.url, max: 1 }) }),
      plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })],
    });
    try {
      // The statistics autovacuum keeps, so the planner knows the tables' sizes.
      await sql`analyze`.execute(db);
      const { chained, scans } = await db.transaction().execute(async (trx) => {
        const chain = { worker: 'w1', owner, leaseMs: 60_000 };
        const commit = await new QueueLedger(trx, new Reconnect()).commit('g0000', epoch, finish('g0000'), now, chain);
        // This transaction's own counts: what the commit statement read, and how.
        const read = await sql<{ relname: string; scans: string }>`
          select relname, seq_scan as scans from pg_stat_xact_user_tables where relname in ('queue_runs', 'runs')`.execute(
          trx,
        );
        return { chained: commit.chained?.runId, scans: read.rows.map((r) => [r.relname, Number(r.scans)]) };
      });
      expect(chained).toBe('g0001');
      expect(Object.fromEntries(scans)).toEqual({ queue_runs: 0, runs: 0 });
    } finally {
      await db.destroy();
    }
  });

  it("chains past its own group's job on its way to a worker, not past one left waiting nor another run's", async () => {
    // A fleet whose commits refused to chain behind any job sent every case through Redis from then on (each
    // handed-off job, on its way to a free slot, was the next commit's reason): 4 workers chained none of 2,000.
    await store.createRuns(['g0', 'g1', 'g2', 'g3', 'g4'].map((id) => ({ ...queued(id), groupId: 'g' })));
    await store.createRuns([queued('h0')]);
    const ledger = store.queueLedger();
    const chain = { worker: 'w1', owner, leaseMs: 60_000 };
    const only = (runId: string) => (waiting: DispatchCandidate[]) => waiting.filter((c) => c.runId === runId);
    const epoch = epochOf(await ledger.claim('g0', 'w1', owner, now, 60_000));
    // g1's job was just sent: no worker has taken it yet.
    await ledger.dispatch('ledger', now, 10, only('g1'));
    const first = await ledger.commit('g0', epoch, finish('g0'), now + 10, chain);
    expect(first.chained?.runId).toBe('g2');
    // Ten seconds later it still waits (its run asked for more than the fleet has): the slot goes back to the queue.
    const g2 = epochOf(first.chained?.claim ?? { kind: 'duplicate' });
    const second = await ledger.commit('g2', g2, finish('g2'), now + 10_000, chain);
    expect(second).toMatchObject({ committed: true, next: { runId: 'g3' } });
    expect(second.chained).toBeUndefined();
    // Another run's job, however fresh: the freed slot goes back to the queue, where priorities share the fleet.
    const g1 = epochOf(await ledger.claim('g1', 'w1', owner, now + 10_000, 60_000));
    epochOf(await ledger.claim('g3', 'w1', owner, now + 10_000, 60_000));
    await ledger.dispatch('ledger', now + 10_000, 10, only('h0'));
    const third = await ledger.commit('g1', g1, finish('g1'), now + 10_010, chain);
    expect(third).toMatchObject({ committed: true, next: { runId: 'g4' } });
    expect(third.chained).toBeUndefined();
  });

  it('gives the worker the step a run starts from and its stored JSON as it was, whether it claims the run or chains to it', async () => {
    // `task run --context-json … --start-step` on a queue: a worker that read no start step ran the seeded steps
    // again (the store's camelCase mapping renamed the claim's start_step column before the ledger read it).
    // The claim's texts (work, metadata, spec, context) come back inside one json value: keys and characters kept.
    const odd = 'nul \u0000, lone \ud800, quote " and é';
    const stored = {
      metadata: { snake_key: odd },
      spec: { id: 'case:1', vars: { user_name: odd, n: 1.5e-7 } },
      context: { outputs: { first_step: { text: odd } } },
    };
    const work = { case_key: 'k', files: { 'a b.txt': odd } };
    await store.createRuns(
      ['s0', 's1'].map((id) => ({
        ...queued(id),
        ...stored,
        groupId: 's',
        startStep: 'third',
        queue: { pool: 'ledger', limits: [], work },
      })),
    );
    const ledger = store.queueLedger();
    const claim = await ledger.claim('s0', 'w1', owner, now, 60_000);
    expect(claim).toMatchObject({ kind: 'claimed', work, run: { ...stored, startStep: 'third', first: true } });
    const chained = await ledger.commit('s0', epochOf(claim), finish('s0'), now + 10, {
      worker: 'w1',
      owner,
      leaseMs: 60_000,
    });
    expect(chained.chained).toMatchObject({
      runId: 's1',
      claim: { work, run: { ...stored, startStep: 'third', first: true } },
    });
  });

  it('says, when it hands its slot to no run, whether a run of its pool waits for dispatch', async () => {
    // A commit that hands nothing on makes its worker dispatch; with nothing queued (a run's last cases) that
    // locked transaction finds nothing to send.
    await store.createRuns([queued('a0'), queued('b0')]);
    const ledger = store.queueLedger();
    const a = epochOf(await ledger.claim('a0', 'w1', owner, now, 60_000));
    expect(await ledger.commit('a0', a, finish('a0'), now + 10)).toEqual({ committed: true, queued: true });
    const b = epochOf(await ledger.claim('b0', 'w1', owner, now, 60_000));
    expect(await ledger.commit('b0', b, finish('b0'), now + 20)).toEqual({ committed: true, queued: false });
  });

  it('commits through a statement PostgreSQL prepared on the connection and plans once (its generic plan)', async () => {
    await store.createRuns(Array.from({ length: 8 }, (_, i) => ({ ...queued(`p${i}`), groupId: 'p' })));
    let claim = await store.queueLedger().claim('p0', 'w1', owner, now, 60_000);
    // One connection, so the session's prepared statements are the ledger's.
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: preparingPool(new pg.Pool({ connectionString: temp.url, max: 1 })) }),
      plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })],
    });
    try {
      const ledger = new QueueLedger(db, new Reconnect());
      const chain = { worker: 'w1', owner, leaseMs: 60_000 };
      for (let i = 0; i < 7; i++) {
        const commit = await ledger.commit(`p${i}`, epochOf(claim), finish(`p${i}`), now, chain);
        claim = commit.chained?.claim ?? { kind: 'duplicate' };
      }
      const statements = await sql<{ name: string; generic: string }>`
        select name, generic_plans as generic from pg_prepared_statements`.execute(db);
      expect(statements.rows).toHaveLength(1);
      expect(statements.rows[0]?.name).toMatch(/^proctor_/);
      expect(Number(statements.rows[0]?.generic)).toBeGreaterThan(0);
    } finally {
      await db.destroy();
    }
  });

  it("prunes a finished queue run's work with its step state, and counts the queue's table in the store's size", async () => {
    // The work a worker needs (the case's identity, its project files' hashes) outlives the run for nothing.
    const work = { retries: 2, case: { key: 'k', projectFiles: { 'agents/a.py': 'f'.repeat(64) } } };
    const withWork = (runId: string): NewRun => ({ ...queued(runId), queue: { pool: 'ledger', limits: [], work } });
    await store.createRuns([withWork('p1'), withWork('p2')]);
    const ledger = store.queueLedger();
    expect(
      (await ledger.commit('p1', epochOf(await ledger.claim('p1', 'w1', owner, now, 60_000)), finish('p1'), now + 10))
        .committed,
    ).toBe(true);
    const client = new pg.Client({ connectionString: temp.url });
    await client.connect();
    try {
      const works = async () =>
        (await client.query<{ id: string; work: string }>('select run_id as id, work from queue_runs order by run_id'))
          .rows;
      expect(await store.pruneFinished(now + 1000)).toEqual({ runs: 1, journalEntries: 0 });
      expect(await works()).toEqual([
        { id: 'p1', work: '{}' },
        { id: 'p2', work: JSON.stringify(work) },
      ]);
      expect(await store.pruneFinished(now + 1000)).toEqual({ runs: 0, journalEntries: 0 });
      // The run still queued keeps what its worker needs.
      const claim = await ledger.claim('p2', 'w1', owner, now + 20, 60_000);
      expect(claim.kind === 'claimed' && claim.work).toEqual(work);
      const { rows } = await client.query<{ bytes: string }>(
        `select sum(pg_total_relation_size(t::regclass)) as bytes
           from unnest(array['runs', 'instances', 'journal', 'results', 'queue_runs']) as t`,
      );
      expect(await store.sizeBytes()).toBe(Number(rows[0]?.bytes));
    } finally {
      await client.end();
    }
  });
});

// Every ledger statement that touches both tables takes a run's queue_runs row before its runs row (a commit's
// fence, a claim, a release). A cancel that took them the other way round deadlocked with a commit racing it.
describe.skipIf(postgres?.unavailable !== undefined)('queue ledger cancel (postgres)', () => {
  let temp: BackendStore;
  let store: Store;
  let client: pg.Client;
  beforeEach(async () => {
    temp = await (postgres as NonNullable<typeof postgres>).create();
    store = temp.store;
    client = new pg.Client({ connectionString: temp.url });
    await client.connect();
  });
  afterEach(async () => {
    await client.end();
    await temp.remove();
  });

  /** Runs `cancel` while `client` holds r1's queue_runs row, then takes r1's runs row as a commit would. */
  const racingACommit = async <T>(cancel: () => Promise<T>): Promise<T> => {
    await client.query('begin');
    await client.query(`select 1 from queue_runs where run_id = 'r1' for update`);
    // Settled at once, so a deadlock fails the test at the await below instead of as an unhandled rejection.
    const canceled = cancel().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    const blocked = async (): Promise<boolean> => {
      const rows = await client.query(
        `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      return rows.rows.length > 0;
    };
    while (!(await blocked())) await new Promise((r) => setTimeout(r, 10));
    await client.query(`update runs set seen_at = ${now} where run_id = 'r1'`);
    await client.query('commit');
    const outcome = await canceled;
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };

  it('cancels one run a commit holds the queue row of, waiting for it instead of deadlocking', async () => {
    await store.createRuns([queued('r1')]);
    expect(await racingACommit(() => store.queueLedger().cancelUnheld(['r1'], now))).toEqual(['r1']);
    expect((await readRun(store, 'r1')).status).toBe('CANCELED');
    expect(await store.queueLedger().claim('r1', 'w1', owner, now, 60_000)).toEqual({ kind: 'duplicate' });
  });

  it('cancels a group a commit holds a queue row of, waiting for it instead of deadlocking', async () => {
    await store.createRuns([queued('r1'), { ...queued('r2'), groupId: 'r1' }]);
    expect(await racingACommit(() => store.queueLedger().cancelUnheldGroup('r1', now))).toBe(2);
    expect((await readRun(store, 'r1')).status).toBe('CANCELED');
    expect((await readRun(store, 'r2')).status).toBe('CANCELED');
  });
});
