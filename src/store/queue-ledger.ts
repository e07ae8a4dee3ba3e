import { type Kysely, sql } from 'kysely';
import type { JsonObject } from '../records.js';
import type { Database } from './schema.js';
import type { QueuedWork, RunOwner } from './store.js';

type Limit = QueuedWork['limits'][number];

/** A queue run waiting for dispatch, as the dispatcher's scheduler sees it. */
export interface DispatchCandidate {
  runId: string;
  groupId: string;
  limits: Limit[];
}

/** A run's job: its id derives from the run and its dispatch number, so a released run gets a fresh job. */
export interface JobRef {
  runId: string;
  dispatches: number;
}

/**
 * What a worker's claim found: `claimed` (it holds `epoch` until its lease lapses), `duplicate` (the run is
 * terminal: a second delivery, acknowledged without running anything), `held` (another worker holds a live
 * lease until `untilMs`: a blocked or slow worker, to be retried after).
 */
export type Claim =
  | { kind: 'claimed'; epoch: number; work: JsonObject; cancelRequested: boolean }
  | { kind: 'duplicate' }
  | { kind: 'held'; untilMs: number };

export interface ExecutionStats {
  pool: string;
  epoch: number;
  executions: number;
  superseded: number;
}

const active = sql`('QUEUED', 'RUNNING')`;
const num = (v: unknown): number => Number(v);

/**
 * The queue runner's record in PostgreSQL: dispatch under the fleet-wide limits, claims that bump an epoch,
 * leases, releases and the reconciler's view. Redis only delivers; every decision is a conditional statement
 * here, so a lost, repeated or late job changes nothing it should not.
 */
export class QueueLedger {
  constructor(private readonly db: Kysely<Database>) {}

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
      const held = await sql<{ limits: string }>`
        select q.limits as limits from queue_runs q join runs r on r.run_id = q.run_id
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
      return sent.rows.map((r) => ({ runId: r.id, dispatches: num(r.n) }));
    });
  }

  /**
   * Takes a run for `worker` until `now + leaseMs`: a new epoch, one more execution. One statement (one commit):
   * the runs row turns RUNNING in the same statement, and a run that is terminal by then is a duplicate.
   */
  async claim(runId: string, worker: string, owner: RunOwner, now: number, leaseMs: number): Promise<Claim> {
    const taken = await sql<{ epoch: number; work: string; asked: string | null; started: number | null }>`
      with q as (
        update queue_runs set epoch = epoch + 1, executions = executions + 1, lease_until = ${now + leaseMs},
               worker = ${worker}, state = 'dispatched'
         where run_id = ${runId} and state <> 'done' and (lease_until is null or lease_until < ${now})
           and exists (select 1 from runs where run_id = ${runId} and status in ${active})
         returning epoch, work),
      r as (
        update runs set status = 'RUNNING', started_at = ${now}, seen_at = ${now}, owner_host = ${owner.host},
               owner_pid = ${owner.pid}, owner_started_at = ${owner.startedAt}
         where run_id = ${runId} and status in ${active} and exists (select 1 from q)
         returning cancel_requested_at)
      select q.epoch as epoch, q.work as work, r.cancel_requested_at as asked, (select count(*) from r) as started
        from q left join r on true`.execute(this.db);
    const row = taken.rows[0];
    if (!row) return this.notClaimed(runId);
    // Terminal in the instant between (a commit or cancel won the race): nothing runs.
    if (num(row.started) === 0) return { kind: 'duplicate' };
    return {
      kind: 'claimed',
      epoch: num(row.epoch),
      work: JSON.parse(row.work) as JsonObject,
      cancelRequested: row.asked !== null,
    };
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
   * Runs whose job may be gone (Redis lost it, or a dispatcher died between marking and sending): dispatched
   * and unclaimed for `graceMs`, or running with a lease lapsed for `graceMs`. Re-sending is harmless: the same
   * job id dedupes while the job exists, and a claim refuses what is terminal or held.
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
           or (r.status = 'RUNNING' and q.lease_until < ${before}))`.execute(this.db);
    return rows.rows.map((r) => ({ runId: r.id, dispatches: num(r.n) }));
  }

  /** Cancels those of `runIds` no worker holds a live lease on; returns them. The rest are their workers' to stop. */
  async cancelUnheld(runIds: readonly string[], now: number): Promise<string[]> {
    if (runIds.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      const rows = await sql<{ id: string }>`
        update runs set status = 'CANCELED', outcome = 'canceled', finished_at = ${now}
         where run_id = any(${[...runIds]}) and status in ${active}
           and exists (select 1 from queue_runs q where q.run_id = runs.run_id
                        and (q.lease_until is null or q.lease_until < ${now}))
         returning run_id as id`.execute(trx);
      const ids = rows.rows.map((r) => r.id);
      if (ids.length > 0) await sql`update queue_runs set state = 'done' where run_id = any(${ids})`.execute(trx);
      return ids;
    });
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
