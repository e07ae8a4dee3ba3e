import { type ExpressionBuilder, type Kysely, type Selectable, SqliteAdapter, sql } from 'kysely';
import type { ErrorKind } from '../errors.js';
import type { JsonObject, Outcome } from '../records.js';
import {
  type ArtifactHead,
  type AttemptHead,
  artifactHead,
  caseAttemptHeads,
  type JournalHead,
  journalHeads,
  type ResultStep,
  resultSteps,
} from './case-artifacts.js';
import { kyselySections, type WriteSections } from './direct-sqlite.js';
import * as explorer from './explorer-reads.js';
import { filesColumn, parseFilesColumn } from './files-column.js';
import { errorKindOf, finishColumns } from './finish-columns.js';
import { RunInserts } from './insert-runs.js';
import { type PreparedQuery, prepareQuery } from './prepared.js';
import { QueueLedger } from './queue-ledger.js';
import { Reconnect } from './reconnect.js';
import { type FollowedResult, followResults, resultCursorNow } from './result-cursor.js';
import { ResultWatches } from './result-watch.js';
import type { Database, JournalTable, RunsTable } from './schema.js';
import type {
  CaseResultRecord,
  CommitPace,
  InstanceRecord,
  JournalEntry,
  NewRun,
  OrphanSelector,
  OwnerSummary,
  ProgressRow,
  PruneReport,
  ResultHead,
  ResultText,
  ResultWatch,
  RunFilter,
  RunFinish,
  RunOwner,
  RunRecord,
  RunStatus,
  Store,
  StoredResult,
} from './store.js';
import { WriteBatch } from './write-batch.js';

const active = ['QUEUED', 'RUNNING'];

// PostgreSQL returns bigint columns as strings; SQLite as numbers.
const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

const ownerOf = (r: Pick<Selectable<RunsTable>, 'ownerHost' | 'ownerPid' | 'ownerStartedAt'>): RunOwner | null =>
  r.ownerHost !== null && r.ownerPid !== null
    ? { host: r.ownerHost, pid: r.ownerPid, startedAt: num(r.ownerStartedAt) ?? 0 }
    : null;

const toRunRecord = (r: Selectable<RunsTable>): RunRecord => ({
  runId: r.runId,
  groupId: r.groupId,
  taskId: r.taskId,
  instanceId: r.instanceId,
  status: r.status as RunStatus,
  target: r.target,
  caseKey: r.caseKey,
  outcome: r.outcome as Outcome | null,
  score: r.score,
  error: r.errorKind
    ? { kind: r.errorKind as ErrorKind, message: r.errorMessage ?? '', retryable: r.errorRetryable === 1 }
    : null,
  metadata: JSON.parse(r.metadata) as JsonObject,
  owner: ownerOf(r),
  seenAt: num(r.seenAt),
  cancelRequestedAt: num(r.cancelRequestedAt),
  createdAt: num(r.createdAt) ?? 0,
  startedAt: num(r.startedAt),
  finishedAt: num(r.finishedAt),
});

// Matches the runs of exactly this owner; the start time too, so a reused pid is another owner.
const ownedBy = (owner: RunOwner) => (eb: ExpressionBuilder<Database, 'runs'>) =>
  eb.and([
    eb('ownerHost', '=', owner.host),
    eb('ownerPid', '=', owner.pid),
    eb('ownerStartedAt', '=', owner.startedAt),
  ]);

// A queue run is no process's to orphan: its lease lives in queue_runs, and a lapsed one sends it to a new worker.
const notQueued = (eb: ExpressionBuilder<Database, 'runs'>) =>
  eb.not(
    eb.exists(eb.selectFrom('queueRuns').select('queueRuns.runId').whereRef('queueRuns.runId', '=', 'runs.runId')),
  );

type JournalColumns = [string, number, string, number, string, string, number];

const journalColumns = (e: JournalEntry): JournalColumns => [
  e.instanceId,
  e.seq,
  e.stepId,
  e.attempt,
  JSON.stringify(e.ops),
  JSON.stringify(e.output ?? null),
  e.createdAt,
];

const insertJournalRow = (
  db: Kysely<Database>,
  [instanceId, seq, stepId, attempt, ops, output, createdAt]: JournalColumns,
) =>
  db
    .insertInto('journal')
    .values({ instanceId, seq, stepId, attempt, ops, output, createdAt })
    // A taken position is refused (0 rows), unless this very entry took it (a reconnect retrying its own
    // write): then the no-op update counts 1. Its content is compared too: two writers may share a millisecond.
    .onConflict((oc) =>
      oc
        .columns(['instanceId', 'seq'])
        .doUpdateSet({ seq: (eb) => eb.ref('excluded.seq') })
        .where((eb) =>
          eb.and([
            eb('journal.stepId', '=', eb.ref('excluded.stepId')),
            eb('journal.attempt', '=', eb.ref('excluded.attempt')),
            eb('journal.createdAt', '=', eb.ref('excluded.createdAt')),
            eb('journal.ops', '=', eb.ref('excluded.ops')),
            eb('journal.output', '=', eb.ref('excluded.output')),
          ]),
        ),
    );

const finished = ['COMPLETED', 'FAILED', 'CANCELED'];

/** How many of a group's runs have one of `statuses`. */
const countIn = (db: Kysely<Database>, statuses: readonly string[]) =>
  prepareQuery<[string]>(1, (groupId) =>
    db
      .selectFrom('runs')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('groupId', '=', groupId)
      .where('status', 'in', [...statuses]),
  );

/**
 * The statements every run executes: compiled once per store (see prepared.ts). A write retried after a lost
 * connection (reconnect.ts) may find its own earlier attempt committed, so the claim and the journal append
 * each count their own identical earlier effect as done, and only someone else's as refused.
 */
const hotQueries = (db: Kysely<Database>) => ({
  claim: prepareQuery<[string, number, string, number, number]>(5, (runId, now, host, pid, startedAt) =>
    db
      .updateTable('runs')
      .set({
        status: 'RUNNING',
        startedAt: now,
        seenAt: now,
        ownerHost: host,
        ownerPid: pid,
        ownerStartedAt: startedAt,
      })
      .where('runId', '=', runId)
      .where((eb) =>
        eb.or([
          eb('status', '=', 'QUEUED'),
          eb.and([
            eb('status', '=', 'RUNNING'),
            eb('startedAt', '=', now),
            eb('ownerHost', '=', host),
            eb('ownerPid', '=', pid),
            eb('ownerStartedAt', '=', startedAt),
          ]),
        ]),
      ),
  ),
  finish: prepareQuery<
    [string, string, string | null, number | null, string | null, string | null, number | null, number, number | null]
  >(9, (runId, status, outcome, score, errorKind, errorMessage, errorRetryable, finishedAt, startedAt) =>
    db
      .updateTable('runs')
      .set((eb) => ({
        status,
        outcome,
        score,
        errorKind,
        errorMessage,
        errorRetryable,
        finishedAt,
        startedAt: eb.fn.coalesce('startedAt', eb.val(startedAt)),
      }))
      .where('runId', '=', runId)
      .where('status', 'in', active),
  ),
  // Every eval case commits one with its status.
  result: prepareQuery<
    [string, string, string, number, string, string, string, number | null, string | null, string, string, number]
  >(12, (runId, groupId, caseKey, attempt, target, evalPath, outcome, score, errorKind, row, files, committedAt) =>
    db.insertInto('results').values({
      runId,
      groupId,
      caseKey,
      attempt,
      target,
      evalPath,
      outcome,
      score,
      errorKind,
      row,
      files,
      committedAt,
    }),
  ),
  // Every run reads its instance's journal before it starts (empty unless the instance ran before).
  readJournal: prepareQuery<[string]>(1, (instanceId) =>
    db.selectFrom('journal').selectAll().where('instanceId', '=', instanceId).orderBy('seq'),
  ),
  journal: prepareQuery<JournalColumns>(7, (...row) => insertJournalRow(db, row)),
  // A run's submitter and its follower count its runs in flight, and those finished, every few of its cases.
  countActive: countIn(db, active),
  countFinished: countIn(db, finished),
});

/**
 * The Store over Kysely: one implementation for SQLite and PostgreSQL. The writes of a run's life (claim,
 * journal, finish, heartbeat) go through a WriteBatch, and its hot statements are compiled once.
 */
export class KyselyStore implements Store {
  private readonly batch: WriteBatch<Database>;
  private readonly hot: ReturnType<typeof hotQueries>;
  private readonly runInserts: RunInserts;
  private readonly reconnect = new Reconnect();
  private readonly watches = new ResultWatches();
  private ledger: QueueLedger | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sections: WriteSections<Database> = kyselySections(),
    groupCommitMs = 0,
  ) {
    this.batch = new WriteBatch(db, this.reconnect, sections, groupCommitMs);
    this.hot = hotQueries(db);
    this.runInserts = new RunInserts(db);
  }

  async createRuns(runs: readonly NewRun[]): Promise<void> {
    if (runs.length === 0) return;
    const now = Date.now();
    await this.reconnect.run((attempt) => this.insertRuns(runs, now, attempt > 0));
  }

  /**
   * One transaction for all of them. `again` after a lost connection: the attempt before may have committed
   * them, so rows already there are kept; a first attempt still fails on a run id that exists.
   */
  private async insertRuns(runs: readonly NewRun[], now: number, again: boolean): Promise<void> {
    await this.sections.transaction(this.db, (trx) => this.runInserts.insert(trx, runs, now, again));
  }

  commitGrouped(): void {
    this.batch.hurry();
  }

  queueLedger(): QueueLedger {
    this.ledger ??= new QueueLedger(this.db, this.reconnect);
    return this.ledger;
  }

  claimRun(runId: string, owner: RunOwner, now: number, pace: CommitPace = 'now'): Promise<boolean> {
    return this.batch.run(
      async (db) => {
        const result = await this.hot.claim(db, runId, now, owner.host, owner.pid, owner.startedAt);
        return Number(result.numAffectedRows) === 1;
      },
      true,
      pace,
    );
  }

  async finishRun(runId: string, finish: RunFinish, now: number): Promise<boolean> {
    const result = finish.result;
    // Stringified once: the same text is stored and, by a watching materialiser, written as the index line.
    const row = result ? JSON.stringify(result.row) : '';
    const drop = result && this.watches.hold(String(result.row.group_id), runId, result, row);
    try {
      const finished = await this.batch.run(
        async (db) => {
          if (!(await this.finishStatus(db, runId, finish, now))) return false;
          if (result) await this.insertResult(db, runId, result, row, now);
          return true;
        },
        false,
        // A result's finish holds up nothing but its own report (Store.finishRun).
        result ? 'grouped' : 'now',
      );
      if (!finished) drop?.();
      return finished;
    } catch (error) {
      drop?.();
      throw error;
    }
  }

  private async insertResult(
    db: Kysely<Database>,
    runId: string,
    r: CaseResultRecord,
    row: string,
    now: number,
  ): Promise<void> {
    await this.hot.result(
      db,
      runId,
      String(r.row.group_id),
      r.caseKey,
      r.attempt,
      r.target,
      r.evalPath,
      String(r.row.outcome),
      typeof r.row.score === 'number' ? r.row.score : null,
      errorKindOf(r.row),
      row,
      filesColumn(r.files),
      now,
    );
  }

  private async finishStatus(db: Kysely<Database>, runId: string, finish: RunFinish, now: number): Promise<boolean> {
    const c = finishColumns(finish, now);
    const result = await this.hot.finish(
      db,
      runId,
      c.status,
      c.outcome,
      c.score,
      c.errorKind,
      c.errorMessage,
      c.errorRetryable,
      c.finishedAt,
      finish.startedAt ?? null,
    );
    return Number(result.numAffectedRows) === 1;
  }

  async readResults(groupId: string, afterSeq: number, limit: number): Promise<StoredResult[]> {
    const rows = await this.reconnect.run(() =>
      this.db
        .selectFrom('results')
        .select(explorer.storedColumns)
        .where('groupId', '=', groupId)
        .where('seq', '>', afterSeq)
        .orderBy('seq')
        .limit(limit)
        .execute(),
    );
    return rows.map(explorer.toStoredResult);
  }

  async readResultHeads(groupId: string, afterSeq: number, limit: number): Promise<ResultHead[]> {
    const rows = await this.reconnect.run(() =>
      this.db
        .selectFrom('results')
        .select(['seq', 'runId'])
        .where('groupId', '=', groupId)
        .where('seq', '>', afterSeq)
        .orderBy('seq')
        .limit(limit)
        .execute(),
    );
    return rows.map((r) => ({ seq: Number(r.seq), runId: r.runId }));
  }

  async readResultTexts(seqs: readonly number[]): Promise<ResultText[]> {
    if (seqs.length === 0) return [];
    const rows = await this.reconnect.run(() =>
      this.db
        .selectFrom('results')
        .select(['runId', 'caseKey', 'attempt', 'row', 'files'])
        .where('seq', 'in', [...seqs])
        .orderBy('seq')
        .execute(),
    );
    return rows.map((r) => ({ ...r, files: parseFilesColumn(r.files) }));
  }

  watchResults(groupId: string): ResultWatch {
    return this.watches.watch(groupId);
  }

  async countResults(groupId: string): Promise<number> {
    const row = await this.reconnect.run(() =>
      this.db
        .selectFrom('results')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('groupId', '=', groupId)
        .executeTakeFirstOrThrow(),
    );
    return Number(row.count);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const row = await this.reconnect.run(() =>
      this.db.selectFrom('runs').selectAll().where('runId', '=', runId).executeTakeFirst(),
    );
    return row && toRunRecord(row);
  }

  async listRuns(filter: RunFilter): Promise<RunRecord[]> {
    let query = this.db.selectFrom('runs').selectAll();
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.statuses) query = query.where('status', 'in', [...filter.statuses]);
    if (filter.groupId) query = query.where('groupId', '=', filter.groupId);
    const ordered = query
      .orderBy('createdAt', 'desc')
      .orderBy('runId', 'desc')
      .limit(filter.limit ?? 1000);
    const rows = await this.reconnect.run(() => ordered.execute());
    return rows.map(toRunRecord);
  }

  async groupProgress(groupId: string): Promise<ProgressRow[]> {
    const rows = await this.reconnect.run(() =>
      this.db
        .selectFrom('runs')
        .select(['target', 'status', 'outcome', (eb) => eb.fn.countAll<number | string>().as('count')])
        .where('groupId', '=', groupId)
        .groupBy(['target', 'status', 'outcome'])
        .execute(),
    );
    return rows.map((r) => ({
      target: r.target,
      status: r.status as RunStatus,
      outcome: r.outcome as Outcome | null,
      count: Number(r.count),
    }));
  }

  countFinished(groupId: string): Promise<number> {
    return this.countRuns(this.hot.countFinished, groupId);
  }

  countActive(groupId: string): Promise<number> {
    return this.countRuns(this.hot.countActive, groupId);
  }

  private async countRuns(count: PreparedQuery<[string]>, groupId: string): Promise<number> {
    const { rows } = await this.reconnect.run(() => count(this.db, groupId));
    return Number((rows[0] as { count: number | string }).count);
  }

  async getInstance(instanceId: string): Promise<InstanceRecord | undefined> {
    const row = await this.reconnect.run(() =>
      this.db.selectFrom('instances').selectAll().where('instanceId', '=', instanceId).executeTakeFirst(),
    );
    return (
      row && {
        instanceId: row.instanceId,
        taskId: row.taskId,
        spec: JSON.parse(row.spec) as JsonObject,
        context: JSON.parse(row.context) as JsonObject,
        startStep: row.startStep,
        createdAt: Number(row.createdAt),
      }
    );
  }

  appendJournal(entry: JournalEntry): Promise<boolean> {
    return this.batch.run((db) => this.insertJournal(db, entry), true);
  }

  private async insertJournal(db: Kysely<Database>, entry: JournalEntry): Promise<boolean> {
    const result = await this.hot.journal(db, ...journalColumns(entry));
    return Number(result.numAffectedRows) === 1;
  }

  async readJournal(instanceId: string): Promise<JournalEntry[]> {
    const rows = (await this.reconnect.run(() => this.hot.readJournal(this.db, instanceId)))
      .rows as Selectable<JournalTable>[];
    return rows.map((r) => ({
      instanceId: r.instanceId,
      seq: r.seq,
      stepId: r.stepId,
      attempt: r.attempt,
      ops: JSON.parse(r.ops) as JournalEntry['ops'],
      output: JSON.parse(r.output) as unknown,
      createdAt: Number(r.createdAt),
    }));
  }

  async heartbeat(owner: RunOwner, now: number): Promise<void> {
    await this.batch.run(async (db) => {
      await db.updateTable('runs').set({ seenAt: now }).where('status', 'in', active).where(ownedBy(owner)).execute();
      return true;
    }, true);
  }

  async requestCancel(runId: string, now: number): Promise<boolean> {
    return (await this.requestCancelOf('runId', runId, now)) === 1;
  }

  requestGroupCancel(groupId: string, now: number): Promise<number> {
    return this.requestCancelOf('groupId', groupId, now);
  }

  private async requestCancelOf(column: 'runId' | 'groupId', id: string, now: number): Promise<number> {
    let requested = 0;
    await this.batch.run(async (db) => {
      const result = await db
        .updateTable('runs')
        .set((eb) => ({ cancelRequestedAt: eb.fn.coalesce('cancelRequestedAt', eb.val(now)) }))
        .where(column, '=', id)
        .where('status', 'in', active)
        .executeTakeFirst();
      requested = Number(result.numUpdatedRows);
      return requested > 0;
    }, true);
    return requested;
  }

  async cancelRequested(owner: RunOwner): Promise<string[]> {
    const rows = await this.reconnect.run(() =>
      this.db
        .selectFrom('runs')
        .select('runId')
        .where('status', 'in', active)
        .where(ownedBy(owner))
        .where('cancelRequestedAt', 'is not', null)
        .execute(),
    );
    return rows.map((r) => r.runId);
  }

  async runOwners(): Promise<OwnerSummary[]> {
    const rows = await this.reconnect.run(() =>
      this.db
        .selectFrom('runs')
        .select((eb) => [
          'ownerHost',
          'ownerPid',
          'ownerStartedAt',
          eb.fn.countAll<number | string>().as('runs'),
          eb.fn.min<number | string>(eb.fn.coalesce('seenAt', 'createdAt')).as('oldestSeenAt'),
        ])
        .where('status', 'in', active)
        .where(notQueued)
        .groupBy(['ownerHost', 'ownerPid', 'ownerStartedAt'])
        .execute(),
    );
    return rows.map((r) => ({
      owner: ownerOf(r),
      runs: Number(r.runs),
      oldestSeenAt: Number(r.oldestSeenAt),
    }));
  }

  async failOrphans(selector: OrphanSelector, finish: RunFinish, now: number): Promise<RunRecord[]> {
    const { owner, seenBefore } = selector;
    let query = this.db
      .updateTable('runs')
      .set(finishColumns(finish, now))
      .where('status', 'in', active)
      .where(notQueued);
    query = owner ? query.where(ownedBy(owner)) : query.where('ownerHost', 'is', null);
    if (seenBefore !== undefined)
      query = query.where((eb) => eb(eb.fn.coalesce('seenAt', 'createdAt'), '<', seenBefore));
    // Conditional on the runs still being active: a retry after a lost connection fails only those still left.
    const returning = query.returningAll();
    const rows = await this.reconnect.run(() => returning.execute());
    return rows.map(toRunRecord);
  }

  async pruneFinished(finishedBefore: number): Promise<PruneReport> {
    // Each run has its own instance (createRuns refuses a taken instance id), so a run's state goes with it.
    const finished = (db: Kysely<Database>) =>
      db.selectFrom('runs').where('status', 'not in', active).where('finishedAt', '<', finishedBefore);
    const prunable = (db: Kysely<Database>) => finished(db).select('instanceId');
    return this.reconnect.run(() =>
      this.db.transaction().execute(async (trx) => {
        const journal = await trx.deleteFrom('journal').where('instanceId', 'in', prunable(trx)).executeTakeFirst();
        const instances = await trx.deleteFrom('instances').where('instanceId', 'in', prunable(trx)).executeTakeFirst();
        // A queue run's work is what its worker needed to execute it; its row stays, with the run's execution counts.
        await trx
          .updateTable('queueRuns')
          .set({ work: '{}' })
          .where('runId', 'in', finished(trx).select('runId'))
          .where('work', '<>', '{}')
          .execute();
        return { runs: Number(instances.numDeletedRows), journalEntries: Number(journal.numDeletedRows) };
      }),
    );
  }

  private isSqlite(): boolean {
    return this.db.getExecutor().adapter instanceof SqliteAdapter;
  }

  async sizeBytes(): Promise<number> {
    if (this.isSqlite()) {
      const { rows } = await sql<{ bytes: number }>`
        select page_count * page_size as bytes from pragma_page_count(), pragma_page_size()`.execute(this.db);
      return Number(rows[0]?.bytes ?? 0);
    }
    const { rows } = await sql<{ bytes: string }>`
      select coalesce(sum(pg_total_relation_size(c.oid)), 0) as bytes from pg_class c
      where c.relname in ('runs', 'instances', 'journal', 'results', 'queue_runs') and c.relkind = 'r'
        and pg_table_is_visible(c.oid)`.execute(this.db);
    return Number(rows[0]?.bytes ?? 0);
  }

  async compact(): Promise<void> {
    // PostgreSQL reuses freed space by itself (autovacuum); SQLite keeps its file's size until told.
    if (this.isSqlite()) await sql`vacuum`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.batch.flush();
    await this.db.destroy();
  }

  listGroups(filter: explorer.GroupFilter): Promise<explorer.GroupSummary[]> {
    return this.reconnect.run(() => explorer.listGroups(this.db, filter));
  }

  queryCases(groupId: string, query: explorer.CaseQuery): Promise<explorer.CasePage> {
    return this.reconnect.run(() => explorer.queryCases(this.db, groupId, query));
  }

  caseAttemptHeads(groupId: string, caseKey: string, chars: number): Promise<AttemptHead[]> {
    return this.reconnect.run(() => caseAttemptHeads(this.db, groupId, caseKey, chars));
  }

  artifactHead(seq: number, name: string, chars?: number): Promise<ArtifactHead | undefined> {
    return this.reconnect.run(() => artifactHead(this.db, seq, name, chars));
  }

  resultSteps(runId: string): Promise<ResultStep[]> {
    return this.reconnect.run(() => resultSteps(this.db, runId));
  }

  journalHeads(instanceId: string, chars: number): Promise<JournalHead[]> {
    return this.reconnect.run(() => journalHeads(this.db, instanceId, chars));
  }

  caseMatrix(groupId: string, limit: number): Promise<explorer.MatrixCell[]> {
    return this.reconnect.run(() => explorer.caseMatrix(this.db, groupId, limit));
  }

  caseFacets(groupId: string): Promise<explorer.CaseFacets> {
    return this.reconnect.run(() => explorer.caseFacets(this.db, groupId));
  }

  groupCost(groupId: string): Promise<explorer.GroupCost> {
    return this.reconnect.run(() => explorer.groupCost(this.db, groupId));
  }

  resultCursor(groupId: string): Promise<string> {
    return this.reconnect.run(() => resultCursorNow(this.db, groupId));
  }

  followResults(groupId: string, cursor: string, limit: number): Promise<FollowedResult[]> {
    return this.reconnect.run(() => followResults(this.db, groupId, cursor, limit));
  }
}
