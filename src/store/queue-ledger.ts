import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { JsonObject } from '../records.js';
import { filesColumn } from './files-column.js';
import { errorKindOf, finishColumns } from './finish-columns.js';
import { type PreparedQuery, prepareQuery } from './prepared.js';
import type { Reconnect } from './reconnect.js';
import type { Database } from './schema.js';
import type { QueuedWork, RunFinish, RunOwner } from './store.js';

type Limit = QueuedWork['limits'][number];

/** A queue run waiting for dispatch, as the dispatcher's scheduler sees it. */
export interface DispatchCandidate {
  runId: string;
  groupId: string;
  limits: Limit[];
}

/**
 * A run's job: its id derives from the run and its dispatch number, so a released run gets a fresh job. Its
 * `priority` (lowest first) is 1 + how many of its group's runs were executing when it was sent: a free slot
 * goes to the run with the fewest cases executing, so runs share the fleet evenly whatever their
 * max_concurrency, and a run that asked for more than the fleet has queues its excess behind the others.
 */
export interface JobRef {
  runId: string;
  dispatches: number;
  priority: number;
}

/**
 * How long a job is taken to be on its way to a free slot rather than waiting for one (see `commit`). On a
 * loaded machine (load 20 on 2 cores) jobs took 1.1 s on average to reach a worker, and at 1 s 4 workers sent
 * 43% of their cases through Redis again.
 */
const inTransitMs = 5000;

// BullMQ's highest priority number.
const maxPriority = 2 ** 21;
const priorityOf = (executing: number): number => Math.min(executing + 1, maxPriority);

/** What a worker executes a claimed run from: its runs row and instance, read by the claim itself. */
export interface ClaimedRun {
  groupId: string;
  instanceId: string;
  target: string | null;
  metadata: JsonObject;
  spec: JsonObject;
  context: JsonObject;
  startStep: string | null;
  /** No execution before this one: the instance's journal is known empty. */
  first: boolean;
}

/**
 * What a worker's claim found: `claimed` (it holds `epoch` until its lease lapses), `duplicate` (the run is
 * terminal: a second delivery, acknowledged without running anything), `held` (another worker holds a live
 * lease until `untilMs`: a blocked or slow worker, to be retried after).
 */
export type Claim =
  | { kind: 'claimed'; epoch: number; work: JsonObject; cancelRequested: boolean; run: ClaimedRun }
  | { kind: 'duplicate' }
  | { kind: 'held'; untilMs: number };

/**
 * A commit's outcome: `committed` (this execution's end is the run's record) and, when it committed, the run
 * handed the freed slot: `next`, marked dispatched, whose job is the committer's to send, or `chained`, already
 * claimed for the committing worker, which executes it without a job.
 */
export interface Commit {
  committed: boolean;
  /** Committed and handed nothing on: whether a run of the pool waits, so a dispatch may have one to send. */
  queued?: boolean;
  next?: JobRef;
  chained?: { runId: string; claim: Extract<Claim, { kind: 'claimed' }> };
}

/** The committing worker, when it would execute the run its commit frees a slot for (see `commit`). */
export interface Chain {
  worker: string;
  owner: RunOwner;
  leaseMs: number;
}

export interface ExecutionStats {
  pool: string;
  epoch: number;
  executions: number;
  superseded: number;
}

const active = sql`('QUEUED', 'RUNNING')`;
const num = (v: unknown): number => Number(v);

/**
 * What a claim reads in its statement: the ledger row it took and the run and instance it executes, as one `json`
 * value (`claimJson`) in a column named `claim` (one word: the store maps result columns to camelCase, not the
 * keys inside it). One value is one parse for the worker, not a parser per column and a JSON.parse per text.
 */
interface ClaimRow {
  epoch: number | null;
  executions: number | null;
  work: JsonObject | null;
  asked: number | null;
  started: number;
  grp: string | null;
  instance: string | null;
  target: string | null;
  metadata: JsonObject | null;
  spec: JsonObject | null;
  context: JsonObject | null;
  step: string | null;
}

/**
 * The select list of a claim's `json` value, from the ledger row aliased `ledger`, the runs row it turned RUNNING
 * aliased `runs` (`started` counts it) and its instance aliased `i`. The JSON texts go in as `json`, verbatim.
 */
const claimJson = (
  ledger: string,
  runs: string,
  epoch: RawBuilder<unknown>,
  started: RawBuilder<unknown>,
): RawBuilder<unknown> => {
  const q = sql.raw(ledger);
  const r = sql.raw(runs);
  return sql`'epoch', ${epoch}, 'executions', ${q}.executions, 'work', ${q}.work::json,
    'asked', ${r}.cancel_requested_at, 'started', ${started}, 'grp', ${r}.group_id, 'instance', ${r}.instance_id,
    'target', ${r}.target, 'metadata', ${r}.metadata::json, 'spec', i.spec::json, 'context', i.context::json,
    'step', i.start_step`;
};

/** The claim a row holds, or undefined when its run turned terminal before it could start (nothing runs). */
const claimedOf = (row: ClaimRow): Extract<Claim, { kind: 'claimed' }> | undefined => {
  if (row.started === 0 || row.grp === null || row.instance === null || row.spec === null) return undefined;
  return {
    kind: 'claimed',
    epoch: row.epoch ?? 0,
    work: row.work ?? {},
    cancelRequested: row.asked !== null,
    run: {
      groupId: row.grp,
      instanceId: row.instance,
      target: row.target,
      metadata: row.metadata ?? {},
      spec: row.spec,
      context: row.context ?? {},
      startStep: row.step,
      first: row.executions === 1,
    },
  };
};

/** What a commit binds into its statement: one value per parameter. */
interface CommitValues extends ReturnType<typeof finishColumns> {
  runId: string;
  epoch: number;
  hasResult: boolean;
  caseKey: string;
  attempt: number;
  target: string;
  evalPath: string;
  rowOutcome: string;
  rowScore: number | null;
  rowErrorKind: string | null;
  row: string;
  files: string;
  now: number;
  chaining: boolean;
  inTransitSince: number;
  chainLeaseUntil: number;
  chainWorker: string | null;
  chainHost: string | null;
  chainPid: number | null;
  chainStartedAt: number | null;
}

const commitKeys = [
  'runId',
  'epoch',
  'status',
  'outcome',
  'score',
  'errorKind',
  'errorMessage',
  'errorRetryable',
  'finishedAt',
  'hasResult',
  'caseKey',
  'attempt',
  'target',
  'evalPath',
  'rowOutcome',
  'rowScore',
  'rowErrorKind',
  'row',
  'files',
  'now',
  'chaining',
  'inTransitSince',
  'chainLeaseUntil',
  'chainWorker',
  'chainHost',
  'chainPid',
  'chainStartedAt',
] as const satisfies readonly (keyof CommitValues)[];

/** What the commit statement returns: the claim of a chained run, or the job of a handed-on one. */
type CommitRow = ClaimRow & {
  finished: number;
  next: string | null;
  n: number | null;
  executing: number | null;
  queued: boolean | null;
};

/**
 * The commit statement, built and compiled once (prepared.ts): building it per commit (a value node for each of
 * its parameters, the camel-case plugin's pass, the text's compilation) was 8-14% of a commit's CPU on the
 * worker.
 */
const prepareCommit = (db: Kysely<Database>): PreparedQuery<unknown[]> =>
  prepareQuery<unknown[]>(commitKeys.length, (...markers) => {
    const v = Object.fromEntries(commitKeys.map((k, i) => [k, markers[i]])) as unknown as CommitValues;
    const statement = sql`
      with fence as (
        update queue_runs set state = 'done', lease_until = null
         where run_id = ${v.runId} and epoch = ${v.epoch} and state = 'dispatched'
         returning group_id, pool, limits),
      fin as (
        update runs set status = ${v.status}, outcome = ${v.outcome}, score = ${v.score},
               error_kind = ${v.errorKind}, error_message = ${v.errorMessage},
               error_retryable = ${v.errorRetryable}, finished_at = ${v.finishedAt}
         where run_id = ${v.runId} and status in ${active} and exists (select 1 from fence)
         returning group_id),
      res as (
        insert into results (run_id, group_id, case_key, attempt, target, eval_path, outcome, score, error_kind,
                             row, files, committed_at)
        select ${v.runId}, fin.group_id, ${v.caseKey}, ${v.attempt}, ${v.target},
               ${v.evalPath}, ${v.rowOutcome},
               ${v.rowScore}, ${v.rowErrorKind},
               ${v.row}, ${v.files}, ${v.now}
          from fin where ${v.hasResult}
        returning 1),
      lost as (
        update queue_runs set superseded = superseded + 1
         where run_id = ${v.runId} and not exists (select 1 from fence)
        returning 1),
      nxt as (
        select q.run_id from queue_runs q join runs w on w.run_id = q.run_id
         where q.group_id = (select group_id from fence) and q.state = 'queued'
           and q.pool = (select pool from fence) and q.limits = (select limits from fence)
           and w.status = 'QUEUED' and exists (select 1 from fin)
         order by q.created_at, q.run_id limit 1 for update of q skip locked),
      solo as (
        select (${v.chaining} and not exists (
                 select 1 from queue_runs o join fence f on o.pool = f.pool
                  where o.state = 'dispatched' and o.lease_until is null
                    and (o.group_id <> f.group_id or o.limits <> f.limits
                         or o.dispatched_at < ${v.inTransitSince}::bigint)))::int as k),
      handed as (
        update queue_runs q set state = 'dispatched', dispatched_at = ${v.now}, dispatches = q.dispatches + 1,
               epoch = q.epoch + s.k, executions = q.executions + s.k,
               lease_until = case when s.k = 1 then ${v.chainLeaseUntil}::bigint end,
               worker = case when s.k = 1 then ${v.chainWorker}::text else q.worker end
          from nxt, solo s where q.run_id = nxt.run_id
        returning q.run_id, q.dispatches, q.epoch, q.executions, q.work, s.k = 1 as chained),
      took as (
        update runs set status = 'RUNNING', started_at = ${v.now}, seen_at = ${v.now},
               owner_host = ${v.chainHost}::text, owner_pid = ${v.chainPid}::int,
               owner_started_at = ${v.chainStartedAt}::bigint
         where run_id = (select run_id from handed where chained) and status = 'QUEUED'
        returning run_id, cancel_requested_at, group_id, instance_id, target, metadata)
      select json_build_object('finished', (select count(*) from fin), 'next', handed.run_id, 'n', handed.dispatches,
             ${claimJson('handed', 't', sql`case when handed.chained then handed.epoch end`, sql`(select count(*) from took)`)},
             'executing', case when not handed.chained then (
               select count(*) from queue_runs c join fence f on c.group_id = f.group_id
                where c.state = 'dispatched' and c.lease_until is not null and c.run_id <> ${v.runId}) end,
             'queued', case when handed.run_id is null then exists (
               select 1 from queue_runs w where w.pool = (select pool from fence) and w.state = 'queued') end) as claim
        from (select 1) one left join handed on true left join took t on true
        left join instances i on i.instance_id = t.instance_id`;
    return { compile: () => statement.compile(db) };
  });

/**
 * The queue runner's record in PostgreSQL: dispatch under the fleet-wide limits, claims that bump an epoch,
 * leases, releases and the reconciler's view. Redis only delivers; every decision is a conditional statement
 * here, so a lost, repeated or late job changes nothing it should not.
 */
export class QueueLedger {
  private committing: PreparedQuery<unknown[]> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly reconnect: Reconnect,
  ) {}

  /**
   * Picks and marks runs to dispatch, in one transaction that holds the pool's advisory lock, so two
   * dispatchers never count the same free slot. `pick` gets the waiting runs (a window per group, oldest
   * first) and the limits of every run already dispatched or running; it returns the runs to send.
   */
  dispatch(
    pool: string,
    now: number,
    window: number,
    pick: (waiting: DispatchCandidate[], inFlight: Limit[][]) => DispatchCandidate[],
  ): Promise<JobRef[]> {
    return this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`proctor-dispatch:${pool}`}))`.execute(trx);
      const held = await sql<{ limits: string; grp: string; claimed: boolean }>`
        select q.limits as limits, q.group_id as grp, q.lease_until is not null as claimed
          from queue_runs q join runs r on r.run_id = q.run_id
         where q.pool = ${pool} and q.state = 'dispatched' and r.status in ${active}`.execute(trx);
      const waiting = await sql<{ id: string; grp: string; limits: string }>`
        select id, grp, limits from (
          select q.run_id as id, q.group_id as grp, q.limits as limits, q.created_at as at,
                 row_number() over (partition by q.group_id order by q.created_at, q.run_id) as n
            from queue_runs q join runs r on r.run_id = q.run_id
           where q.pool = ${pool} and q.state = 'queued' and r.status = 'QUEUED') c
         where n <= ${window} order by at, id`.execute(trx);
      const picked = pick(
        waiting.rows.map((r) => ({ runId: r.id, groupId: r.grp, limits: JSON.parse(r.limits) as Limit[] })),
        held.rows.map((r) => JSON.parse(r.limits) as Limit[]),
      );
      if (picked.length === 0) return [];
      const sent = await sql<{ id: string; n: number }>`
        update queue_runs set state = 'dispatched', dispatched_at = ${now}, dispatches = dispatches + 1
         where run_id = any(${picked.map((p) => p.runId)}) and state = 'queued'
         returning run_id as id, dispatches as n`.execute(trx);
      const dispatches = new Map(sent.rows.map((r) => [r.id, num(r.n)]));
      // Counted as if each job sent before it in the group were executing already.
      const executing = new Map<string, number>();
      for (const r of held.rows) if (r.claimed) executing.set(r.grp, (executing.get(r.grp) ?? 0) + 1);
      return picked.flatMap((p) => {
        const n = dispatches.get(p.runId);
        if (n === undefined) return [];
        const ahead = executing.get(p.groupId) ?? 0;
        executing.set(p.groupId, ahead + 1);
        return [{ runId: p.runId, dispatches: n, priority: priorityOf(ahead) }];
      });
    });
  }

  /**
   * Whether any run of the pool waits for dispatch: one probe of the pool's index, where a dispatch is a
   * transaction under the pool's lock. An idle fleet's periodic dispatch asks this first.
   */
  async hasWaiting(pool: string): Promise<boolean> {
    const rows = await sql`select 1 from queue_runs where pool = ${pool} and state = 'queued' limit 1`.execute(this.db);
    return rows.rows.length > 0;
  }

  /**
   * Takes a run for `worker` until `now + leaseMs`: a new epoch, one more execution. One statement (one round
   * trip): the runs row turns RUNNING in the same statement, which also reads what the worker executes, and a
   * run that is terminal by then is a duplicate.
   */
  async claim(runId: string, worker: string, owner: RunOwner, now: number, leaseMs: number): Promise<Claim> {
    const taken = await sql<{ claim: ClaimRow }>`
      with q as (
        update queue_runs set epoch = epoch + 1, executions = executions + 1, lease_until = ${now + leaseMs},
               worker = ${worker}, state = 'dispatched'
         where run_id = ${runId} and state <> 'done' and (lease_until is null or lease_until < ${now})
           and exists (select 1 from runs where run_id = ${runId} and status in ${active})
         returning epoch, executions, work),
      r as (
        update runs set status = 'RUNNING', started_at = ${now}, seen_at = ${now}, owner_host = ${owner.host},
               owner_pid = ${owner.pid}, owner_started_at = ${owner.startedAt}
         where run_id = ${runId} and status in ${active} and exists (select 1 from q)
         returning cancel_requested_at, group_id, instance_id, target, metadata)
      select json_build_object(${claimJson('q', 'r', sql`q.epoch`, sql`(select count(*) from r)`)}) as claim
        from q left join r on true left join instances i on i.instance_id = r.instance_id`.execute(this.db);
    const row = taken.rows[0]?.claim;
    if (!row) return this.notClaimed(runId);
    // Terminal in the instant between (a commit or cancel won the race): nothing runs.
    return claimedOf(row) ?? { kind: 'duplicate' };
  }

  /**
   * Ends a run under the claim of `epoch`, in one statement: the fence (the claim is still the current one),
   * the terminal status, the eval case's result, and the freed slot handed to the oldest queued run of the
   * same group with the same limits (it fits them exactly, so no dispatch has to count the fleet). A commit
   * that no longer holds the epoch changes nothing but the superseded count. A commit retried after a lost
   * connection whose first attempt went through counts itself superseded: the result is still recorded once.
   *
   * With `chain`, the same statement also claims the handed run for the committing worker, as `claim` would,
   * unless a job of the pool waits for a slot: the slot then goes back to the queue, where job priorities share
   * the fleet between runs, so a chain never goes ahead of a waiting job. A job of the same run and limits sent
   * less than `inTransitMs` ago does not count: it is on its way to a free slot (a commit's handed-off job, as a
   * chain's is), not waiting for one. Counting it made every handed-off job the next commit's reason to send
   * one more, so a fleet that once had a job on its way sent every case through Redis. The chained run has no
   * job: no Redis round trip to send it, none to fetch it and no claim statement. A worker that dies holding it
   * leaves a lapsed lease, and `lost` sends its job then.
   */
  commit(runId: string, epoch: number, finish: RunFinish, now: number, chain?: Chain): Promise<Commit> {
    const c = finishColumns(finish, now);
    const r = finish.result;
    const values: CommitValues = {
      runId,
      epoch,
      ...c,
      hasResult: r !== undefined,
      caseKey: r?.caseKey ?? '',
      attempt: r?.attempt ?? 0,
      target: r?.target ?? '',
      evalPath: r?.evalPath ?? '',
      rowOutcome: String(r?.row.outcome ?? ''),
      rowScore: typeof r?.row.score === 'number' ? r.row.score : null,
      rowErrorKind: r ? errorKindOf(r.row) : null,
      row: JSON.stringify(r?.row ?? {}),
      files: filesColumn(r?.files ?? {}),
      now,
      chaining: chain !== undefined,
      inTransitSince: now - inTransitMs,
      chainLeaseUntil: now + (chain?.leaseMs ?? 0),
      chainWorker: chain?.worker ?? null,
      chainHost: chain?.owner.host ?? null,
      chainPid: chain?.owner.pid ?? null,
      chainStartedAt: chain?.owner.startedAt ?? null,
    };
    this.committing ??= prepareCommit(this.db);
    const committing = this.committing;
    return this.reconnect.run(async () => {
      const result = await committing(this.db, ...commitKeys.map((k) => values[k]));
      const row = (result.rows[0] as { claim: CommitRow } | undefined)?.claim;
      const committed = row?.finished === 1;
      if (!committed || !row) return { committed };
      if (!row.next) return { committed, queued: row.queued === true };
      // Claimed for this worker: its run turned terminal meanwhile (a cancel) when the claim found nothing to run.
      if (row.epoch !== null) {
        const claim = claimedOf(row);
        return claim ? { committed, chained: { runId: row.next, claim } } : { committed };
      }
      return {
        committed,
        next: { runId: row.next, dispatches: row.n ?? 0, priority: priorityOf(row.executing ?? 0) },
      };
    });
  }

  private async notClaimed(runId: string): Promise<Claim> {
    const row = await sql<{ status: string; until: string | null }>`
      select r.status as status, q.lease_until as until from runs r join queue_runs q on q.run_id = r.run_id
       where r.run_id = ${runId}`.execute(this.db);
    const found = row.rows[0];
    if (!found || !['QUEUED', 'RUNNING'].includes(found.status) || found.until === null) return { kind: 'duplicate' };
    return { kind: 'held', untilMs: num(found.until) };
  }

  /**
   * Renews `worker`'s leases of `runIds`. Returns the runs it still holds and, among them, those whose cancel
   * someone requested: a run missing from `held` was taken over, and its execution can only be superseded.
   */
  async renew(
    runIds: readonly string[],
    worker: string,
    now: number,
    leaseMs: number,
  ): Promise<{ held: string[]; cancel: string[] }> {
    if (runIds.length === 0) return { held: [], cancel: [] };
    const rows = await sql<{ id: string; asked: string | null }>`
      with renewed as (
        update queue_runs set lease_until = ${now + leaseMs}
         where run_id = any(${[...runIds]}) and worker = ${worker} and state = 'dispatched'
         returning run_id)
      select r.run_id as id, r.cancel_requested_at as asked from runs r join renewed n on n.run_id = r.run_id`.execute(
      this.db,
    );
    return {
      held: rows.rows.map((r) => r.id),
      cancel: rows.rows.filter((r) => r.asked !== null).map((r) => r.id),
    };
  }

  /**
   * Gives a run back to the queue (a draining worker): a new epoch fences out the execution being abandoned,
   * and the dispatcher sends a fresh job at once instead of after a lock expiry.
   */
  async release(runId: string, epoch: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const released = await sql`
        update queue_runs set epoch = epoch + 1, lease_until = null, worker = null, state = 'queued',
               dispatched_at = null
         where run_id = ${runId} and epoch = ${epoch} and state = 'dispatched'`.execute(trx);
      if (Number(released.numAffectedRows ?? 0) === 0) return false;
      await sql`
        update runs set status = 'QUEUED', owner_host = null, owner_pid = null, owner_started_at = null
         where run_id = ${runId} and status = 'RUNNING'`.execute(trx);
      return true;
    });
  }

  /**
   * Runs whose job may be gone (Redis lost it, a dispatcher died between marking and sending, or the worker
   * executing a chained run died): dispatched and unclaimed for `graceMs`, or running with a lapsed lease.
   * Re-sending is harmless: the same job id dedupes while the job exists, and a claim refuses what is terminal
   * or held.
   */
  async lost(pool: string, now: number, graceMs: number): Promise<JobRef[]> {
    const before = now - graceMs;
    await sql`
      update queue_runs q set state = 'done' from runs r
       where r.run_id = q.run_id and q.pool = ${pool} and q.state <> 'done' and r.status not in ${active}`.execute(
      this.db,
    );
    const rows = await sql<{ id: string; n: number }>`
      select q.run_id as id, q.dispatches as n from queue_runs q join runs r on r.run_id = q.run_id
       where q.pool = ${pool} and q.state = 'dispatched'
         and ((r.status = 'QUEUED' and q.dispatched_at < ${before})
           or (r.status = 'RUNNING' and q.lease_until < ${now}))`.execute(this.db);
    // First in line: they have waited longest.
    return rows.rows.map((r) => ({ runId: r.id, dispatches: num(r.n), priority: 1 }));
  }

  /**
   * Cancels those of `runIds` no worker holds a live lease on; returns them. The rest are their workers' to stop.
   * The queue row is taken before the runs row, the order of every ledger statement that touches both (a commit's
   * fence, a claim, a release): taken the other way round, a cancel racing a commit deadlocked with it.
   */
  async cancelUnheld(runIds: readonly string[], now: number): Promise<string[]> {
    if (runIds.length === 0) return [];
    const rows = await sql<{ id: string }>`
      with unheld as (${this.endUnheld(sql`run_id = any(${[...runIds]})`, now)})
      update runs set status = 'CANCELED', outcome = 'canceled', finished_at = ${now}
        from unheld u where runs.run_id = u.run_id and runs.status in ${active}
      returning runs.run_id as id`.execute(this.db);
    return rows.rows.map((r) => r.id);
  }

  /**
   * cancelUnheld for a whole group, set-based: its runs are never read out, however many (a million queued cases
   * cancel in one statement). Returns how many it ended.
   */
  async cancelUnheldGroup(groupId: string, now: number): Promise<number> {
    const ended = await sql`
      with unheld as (${this.endUnheld(sql`group_id = ${groupId}`, now)})
      update runs set status = 'CANCELED', outcome = 'canceled', finished_at = ${now}
        from unheld u where runs.run_id = u.run_id and runs.status in ${active}`.execute(this.db);
    return Number(ended.numAffectedRows ?? 0);
  }

  /** Marks done the queue rows `which` selects that no live lease holds and whose run is active; returns them. */
  private endUnheld(which: RawBuilder<unknown>, now: number): RawBuilder<unknown> {
    return sql`
      update queue_runs q set state = 'done'
       where ${which} and q.state <> 'done' and (q.lease_until is null or q.lease_until < ${now})
         and exists (select 1 from runs r where r.run_id = q.run_id and r.status in ${active})
      returning q.run_id`;
  }

  async stats(runId: string): Promise<ExecutionStats | undefined> {
    const row = await this.db
      .selectFrom('queueRuns')
      .select(['pool', 'epoch', 'executions', 'superseded'])
      .where('runId', '=', runId)
      .executeTakeFirst();
    return row && { pool: row.pool, epoch: row.epoch, executions: row.executions, superseded: row.superseded };
  }
}
