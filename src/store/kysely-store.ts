import type { Kysely, Selectable } from 'kysely';
import type { ErrorKind } from '../errors.js';
import type { JsonObject, Outcome } from '../records.js';
import type { Database, RunsTable } from './schema.js';
import type {
  InstanceRecord,
  JournalEntry,
  NewRun,
  ProgressRow,
  RunFilter,
  RunFinish,
  RunOwner,
  RunRecord,
  RunStatus,
  Store,
} from './store.js';

const active = ['QUEUED', 'RUNNING'];
// PostgreSQL returns bigint columns as strings; SQLite as numbers.
const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

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
  owner:
    r.ownerHost !== null && r.ownerPid !== null
      ? { host: r.ownerHost, pid: r.ownerPid, startedAt: num(r.ownerStartedAt) ?? 0 }
      : null,
  seenAt: num(r.seenAt),
  createdAt: num(r.createdAt) ?? 0,
  startedAt: num(r.startedAt),
  finishedAt: num(r.finishedAt),
});

// SQLite caps bound parameters per statement; 20 columns × 40 rows stays far below it.
const insertChunk = 40;

/** The Store over Kysely: one implementation for SQLite and PostgreSQL. */
export class KyselyStore implements Store {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {}

  async createRuns(runs: readonly NewRun[]): Promise<void> {
    if (runs.length === 0) return;
    const now = Date.now();
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < runs.length; i += insertChunk) {
        const chunk = runs.slice(i, i + insertChunk);
        await trx
          .insertInto('instances')
          .values(
            chunk.map((r) => ({
              instanceId: r.instanceId,
              taskId: r.taskId,
              spec: JSON.stringify(r.spec),
              context: JSON.stringify(r.context),
              startStep: r.startStep ?? null,
              createdAt: now,
            })),
          )
          .execute();
        await trx
          .insertInto('runs')
          .values(
            chunk.map((r) => ({
              runId: r.runId,
              groupId: r.groupId,
              taskId: r.taskId,
              instanceId: r.instanceId,
              status: 'QUEUED',
              target: r.target ?? null,
              caseKey: r.caseKey ?? null,
              metadata: JSON.stringify(r.metadata),
              createdAt: now,
            })),
          )
          .execute();
      }
    });
  }

  async claimRun(runId: string, owner: RunOwner, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('runs')
      .set({
        status: 'RUNNING',
        startedAt: now,
        seenAt: now,
        ownerHost: owner.host,
        ownerPid: owner.pid,
        ownerStartedAt: owner.startedAt,
      })
      .where('runId', '=', runId)
      .where('status', '=', 'QUEUED')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async finishRun(runId: string, finish: RunFinish, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('runs')
      .set({
        status: finish.status,
        outcome: finish.outcome ?? null,
        score: finish.score ?? null,
        errorKind: finish.error?.kind ?? null,
        errorMessage: finish.error?.message ?? null,
        errorRetryable: finish.error ? (finish.error.retryable ? 1 : 0) : null,
        finishedAt: now,
      })
      .where('runId', '=', runId)
      .where('status', 'in', active)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const row = await this.db.selectFrom('runs').selectAll().where('runId', '=', runId).executeTakeFirst();
    return row && toRunRecord(row);
  }

  async listRuns(filter: RunFilter): Promise<RunRecord[]> {
    let query = this.db.selectFrom('runs').selectAll();
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.groupId) query = query.where('groupId', '=', filter.groupId);
    const rows = await query
      .orderBy('createdAt', 'desc')
      .orderBy('runId', 'desc')
      .limit(filter.limit ?? 1000)
      .execute();
    return rows.map(toRunRecord);
  }

  async groupProgress(groupId: string): Promise<ProgressRow[]> {
    const rows = await this.db
      .selectFrom('runs')
      .select(['target', 'status', 'outcome', (eb) => eb.fn.countAll<number | string>().as('count')])
      .where('groupId', '=', groupId)
      .groupBy(['target', 'status', 'outcome'])
      .execute();
    return rows.map((r) => ({
      target: r.target,
      status: r.status as RunStatus,
      outcome: r.outcome as Outcome | null,
      count: Number(r.count),
    }));
  }

  async getInstance(instanceId: string): Promise<InstanceRecord | undefined> {
    const row = await this.db
      .selectFrom('instances')
      .selectAll()
      .where('instanceId', '=', instanceId)
      .executeTakeFirst();
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

  async appendJournal(entry: JournalEntry): Promise<boolean> {
    const result = await this.db
      .insertInto('journal')
      .values({
        instanceId: entry.instanceId,
        seq: entry.seq,
        stepId: entry.stepId,
        attempt: entry.attempt,
        ops: JSON.stringify(entry.ops),
        output: JSON.stringify(entry.output ?? null),
        createdAt: entry.createdAt,
      })
      .onConflict((oc) => oc.columns(['instanceId', 'seq']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async readJournal(instanceId: string): Promise<JournalEntry[]> {
    const rows = await this.db
      .selectFrom('journal')
      .selectAll()
      .where('instanceId', '=', instanceId)
      .orderBy('seq')
      .execute();
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

  async heartbeat(runIds: readonly string[], now: number): Promise<void> {
    if (runIds.length === 0) return;
    await this.db
      .updateTable('runs')
      .set({ seenAt: now })
      .where('runId', 'in', [...runIds])
      .where('status', '=', 'RUNNING')
      .execute();
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.onClose();
  }
}
