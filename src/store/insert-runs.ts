import type { InsertObject, Kysely } from 'kysely';
import { type PreparedQuery, prepareQuery } from './prepared.js';
import type { Database } from './schema.js';
import type { NewRun } from './store.js';

// SQLite caps bound parameters per statement; 13 columns × 40 rows stays far below it.
const chunkRows = 40;

type Row = (string | number | null)[];
type Table = 'instances' | 'runs' | 'queueRuns';

/** A table's insert: its columns, a run's values in their order, and the key a retry finds taken. */
interface Insert<T extends Table> {
  table: T;
  columns: readonly (keyof Database[T] & string)[];
  row: (r: NewRun, now: number) => Row;
  key: keyof Database[T] & string;
}

const instances: Insert<'instances'> = {
  table: 'instances',
  columns: ['instanceId', 'taskId', 'spec', 'context', 'startStep', 'createdAt'],
  row: (r, now) => [
    r.instanceId,
    r.taskId,
    JSON.stringify(r.spec),
    JSON.stringify(r.context),
    r.startStep ?? null,
    now,
  ],
  key: 'instanceId',
};

const runs: Insert<'runs'> = {
  table: 'runs',
  columns: [
    'runId',
    'groupId',
    'taskId',
    'instanceId',
    'status',
    'target',
    'caseKey',
    'metadata',
    'ownerHost',
    'ownerPid',
    'ownerStartedAt',
    'seenAt',
    'createdAt',
  ],
  row: (r, now) => [
    r.runId,
    r.groupId,
    r.taskId,
    r.instanceId,
    'QUEUED',
    r.target ?? null,
    r.caseKey ?? null,
    JSON.stringify(r.metadata),
    r.owner?.host ?? null,
    r.owner?.pid ?? null,
    r.owner?.startedAt ?? null,
    r.owner ? now : null,
    now,
  ],
  key: 'runId',
};

const queueRuns: Insert<'queueRuns'> = {
  table: 'queueRuns',
  columns: ['runId', 'groupId', 'pool', 'limits', 'work', 'createdAt'],
  row: (r, now) => {
    const { pool = '', limits = [], work = {} } = r.queue ?? {};
    return [r.runId, r.groupId, pool, JSON.stringify(limits), JSON.stringify(work), now];
  },
  key: 'runId',
};

/**
 * The insert of `rows` rows into a table, prepared (prepared.ts): submitting a run's cases builds the same few
 * statements chunk after chunk, and building them (a value node per column per row) cost about as much as SQLite's
 * inserting. `again` keeps rows already there (a retry after a lost connection).
 */
const prepareInsert = <T extends Table>(db: Kysely<Database>, insert: Insert<T>, rows: number, again: boolean) => {
  const width = insert.columns.length;
  return prepareQuery<Row>(rows * width, (...args) =>
    db
      .insertInto(insert.table)
      .values(
        Array.from(
          { length: rows },
          (_, i) =>
            Object.fromEntries(insert.columns.map((c, j) => [c, args[i * width + j]])) as InsertObject<Database, T>,
        ),
      )
      .$if(again, (q) => q.onConflict((oc) => oc.column(insert.key).doNothing())),
  );
};

/** Inserts new runs with their instances, their queue rows too, in chunks; the caller's transaction holds them. */
export class RunInserts {
  // By table, chunk size and retry: a submission's full chunks and its last, shorter one.
  private readonly prepared = new Map<string, PreparedQuery<Row>>();

  constructor(private readonly db: Kysely<Database>) {}

  async insert(trx: Kysely<Database>, newRuns: readonly NewRun[], now: number, again: boolean): Promise<void> {
    for (let i = 0; i < newRuns.length; i += chunkRows) {
      const chunk = newRuns.slice(i, i + chunkRows);
      await this.into(trx, instances, chunk, now, again);
      await this.into(trx, runs, chunk, now, again);
      const queued = chunk.filter((r) => r.queue);
      if (queued.length > 0) await this.into(trx, queueRuns, queued, now, again);
    }
  }

  private into<T extends Table>(
    trx: Kysely<Database>,
    insert: Insert<T>,
    rows: readonly NewRun[],
    now: number,
    again: boolean,
  ): Promise<unknown> {
    const key = `${insert.table}:${rows.length}:${again}`;
    let prepared = this.prepared.get(key);
    if (!prepared) {
      prepared = prepareInsert(this.db, insert, rows.length, again);
      this.prepared.set(key, prepared);
    }
    // One list filled in a loop, not flatMap's array per row: the line was 1.2% of a 5,000-case run's CPU profile.
    // Indexed, not for…of: without V8's optimising compiler (short runs, src/cli/optimisation-budget.ts) each step of
    // an iterator is an object made, and these loops take ~20 steps per case.
    const values: Row = [];
    for (let i = 0; i < rows.length; i++) {
      const row = insert.row(rows[i] as NewRun, now);
      for (let j = 0; j < row.length; j++) values.push(row[j] as Row[number]);
    }
    return prepared(trx, ...values);
  }
}
