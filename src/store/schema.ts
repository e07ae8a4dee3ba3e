import { type Generated, type Kysely, sql } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

/** Column types as Kysely sees them (camelCase; CamelCasePlugin maps to snake_case). JSON is stored as text. */
export interface RunsTable {
  runId: string;
  groupId: string;
  taskId: string;
  instanceId: string;
  status: string;
  target: string | null;
  caseKey: string | null;
  outcome: string | null;
  score: number | null;
  errorKind: string | null;
  errorMessage: string | null;
  errorRetryable: number | null;
  metadata: string;
  ownerHost: string | null;
  ownerPid: number | null;
  ownerStartedAt: number | null;
  seenAt: number | null;
  cancelRequestedAt: number | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

export interface InstancesTable {
  instanceId: string;
  taskId: string;
  spec: string;
  context: string;
  startStep: string | null;
  createdAt: number;
}

export interface JournalTable {
  instanceId: string;
  seq: number;
  stepId: string;
  attempt: number;
  ops: string;
  output: string;
  createdAt: number;
}

/**
 * One committed case attempt: its bundle row and artifacts. The store is the record; a bundle is materialised
 * from these rows in `seq` order (the follower keeps a cursor), on any machine.
 */
export interface ResultsTable {
  /** Commit order, increasing: a reader's cursor. */
  seq: Generated<number>;
  runId: string;
  groupId: string;
  caseKey: string;
  attempt: number;
  target: string;
  /** The identity's eval path (repo-relative POSIX), for filters. */
  evalPath: string;
  outcome: string;
  score: number | null;
  errorKind: string | null;
  /** index.jsonl's row (JSON, snake_case: the bundle's contract). */
  row: string;
  /** The row's identity.test, computed by the database (addResultTest); never written. */
  test: Generated<string | null>;
  /** The case's artifact files by name (JSON object of name → text). */
  files: string;
  committedAt: number;
}

/**
 * A run the queue runner executes: what a worker needs besides the run and its instance, and the fencing,
 * lease and dispatch state of its execution. The runs row keeps the status; this row decides who may set it.
 */
export interface QueueRunsTable {
  runId: string;
  groupId: string;
  pool: string;
  /** JSON list of {key, limit}: the run's concurrency limits, counted across the fleet. */
  limits: string;
  /** JSON: the rest of the request a worker executes (retries, the eval case). */
  work: string;
  /** Bumped by every claim: only the holder of the current epoch may commit. */
  epoch: Generated<number>;
  /** How many times a worker started the run (duplicates included). */
  executions: Generated<number>;
  /** Commits refused because another execution held the epoch by then. */
  superseded: Generated<number>;
  /** How many jobs were sent for the run: part of the job id, so a released run gets a fresh job. */
  dispatches: Generated<number>;
  /** `queued` (waiting for the dispatcher), `dispatched` (a job exists or is due; claimed or not), `done`. */
  state: Generated<string>;
  dispatchedAt: number | null;
  leaseUntil: number | null;
  worker: string | null;
  createdAt: number;
}

/** One row (id 1): the version of the schema the store was last migrated to (see schemaVersion). */
export interface ProctorSchemaTable {
  id: number;
  version: string;
}

export interface Database {
  proctorSchema: ProctorSchemaTable;
  runs: RunsTable;
  queueRuns: QueueRunsTable;
  results: ResultsTable;
  instances: InstancesTable;
  journal: JournalTable;
}

/**
 * Adds a column unless `has` finds it. Looked up first: an alter takes the table's exclusive lock even when the
 * column is there, and would queue every writer behind any open transaction.
 */
const addColumnOnce = async (has: () => Promise<boolean>, add: () => Promise<unknown>): Promise<void> => {
  if (await has()) return;
  try {
    await add();
  } catch (error) {
    // Another process opening the same store may have added it first (the catalog refuses the second add).
    if (!(await has())) throw error;
  }
};

// One catalog row, not the whole introspection: every process opening the store asks. SQLite's xinfo lists
// generated columns too.
const resultsHas = (db: Kysely<Database>, dialect: Dialect, column: string) => async (): Promise<boolean> =>
  (
    await (dialect === 'postgres'
      ? sql`select 1 from information_schema.columns
          where table_schema = current_schema() and table_name = 'results' and column_name = ${column}`
      : sql`select 1 from pragma_table_xinfo('results') where name = ${column}`
    ).execute(db)
  ).rows.length > 0;

/** Columns added after the first release: a store created before them gains them on open. */
const laterColumns = [{ table: 'runs', column: 'cancel_requested_at', type: 'bigint' }] as const;

const addMissingColumns = async (db: Kysely<Database>): Promise<void> => {
  for (const { table, column, type } of laterColumns)
    await addColumnOnce(
      async () =>
        (await db.introspection.getTables()).some((t) => t.name === table && t.columns.some((c) => c.name === column)),
      () => db.schema.alterTable(table).addColumn(column, type).execute(),
    );
};

/**
 * PostgreSQL only: the id of the transaction that inserted each result, set by the server. A live reader
 * follows results by it (result-cursor.ts), since `seq` order is not commit order there.
 */
const addCommitTxid = async (db: Kysely<Database>): Promise<void> => {
  await addColumnOnce(resultsHas(db, 'postgres', 'txid'), () =>
    sql`alter table results add column if not exists txid bigint not null default (pg_current_xact_id()::text::bigint)`.execute(
      db,
    ),
  );
  await db.schema
    .createIndex('results_group_txid')
    .ifNotExists()
    .on('results')
    .columns(['group_id', 'txid', 'seq'])
    .execute();
};

/**
 * The test name of each result, computed by the database from its bundle row, so the explorer's matrix groups and
 * orders by an index instead of parsing every row's JSON (a 100k-case run's first 5,000 cells: ~500 ms → ~20 ms).
 * Generated, so no writer has to set it and stores made before it gain it on open. SQLite can add only a virtual
 * column (the index holds its values); PostgreSQL stores it, rewriting the table once.
 */
const addResultTest = async (db: Kysely<Database>, dialect: Dialect): Promise<void> => {
  await addColumnOnce(resultsHas(db, dialect, 'test'), () =>
    db.schema
      .alterTable('results')
      .addColumn('test', 'text', (c) =>
        dialect === 'postgres'
          ? c.generatedAlwaysAs(sql`(row::jsonb #>> '{identity,test}')`).stored()
          : c.generatedAlwaysAs(sql`json_extract(row, '$.identity.test')`),
      )
      .execute(),
  );
  await db.schema
    .createIndex('results_group_matrix')
    .ifNotExists()
    .on('results')
    .columns(['group_id', 'eval_path', 'test', 'target'])
    .execute();
};

/**
 * Creates the schema if absent. Every statement is idempotent, so any process (CLI, worker, explorer) may be
 * the first to open a store and two may race. Times are epoch milliseconds (bigint in PostgreSQL).
 */
const migrateInFull = async (db: Kysely<Database>, dialect: Dialect): Promise<void> => {
  await db.schema
    .createTable('runs')
    .ifNotExists()
    .addColumn('run_id', 'text', (c) => c.primaryKey())
    .addColumn('group_id', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .addColumn('case_key', 'text')
    .addColumn('outcome', 'text')
    .addColumn('score', 'double precision')
    .addColumn('error_kind', 'text')
    .addColumn('error_message', 'text')
    .addColumn('error_retryable', 'integer')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('owner_host', 'text')
    .addColumn('owner_pid', 'integer')
    .addColumn('owner_started_at', 'bigint')
    .addColumn('seen_at', 'bigint')
    .addColumn('cancel_requested_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .execute();
  await addMissingColumns(db);
  // runs_group (group_id, status) was a prefix of runs_group_tallies (below), which serves every query it did: one
  // index less to move on each status change (two per case).
  await db.schema.dropIndex('runs_group').ifExists().execute();
  // The reconciler and every runner's poll read the non-terminal runs by status; without it each tick scans all.
  await db.schema.createIndex('runs_status').ifNotExists().on('runs').columns(['status', 'owner_pid']).execute();
  await db.schema
    .createTable('instances')
    .ifNotExists()
    .addColumn('instance_id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('start_step', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('journal')
    .ifNotExists()
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('step_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('ops', 'text', (c) => c.notNull())
    .addColumn('output', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('journal_pk', ['instance_id', 'seq'])
    .execute();
  await db.schema
    .createTable('results')
    .ifNotExists()
    .$call((t) =>
      dialect === 'postgres'
        ? t.addColumn('seq', 'bigserial', (c) => c.primaryKey())
        : t.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement()),
    )
    .addColumn('run_id', 'text', (c) => c.notNull().unique())
    .addColumn('group_id', 'text', (c) => c.notNull())
    .addColumn('case_key', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('eval_path', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('score', 'double precision')
    .addColumn('error_kind', 'text')
    .addColumn('row', 'text', (c) => c.notNull())
    .addColumn('files', 'text', (c) => c.notNull())
    .addColumn('committed_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('queue_runs')
    .ifNotExists()
    .addColumn('run_id', 'text', (c) => c.primaryKey())
    .addColumn('group_id', 'text', (c) => c.notNull())
    .addColumn('pool', 'text', (c) => c.notNull())
    .addColumn('limits', 'text', (c) => c.notNull())
    .addColumn('work', 'text', (c) => c.notNull())
    .addColumn('epoch', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('executions', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('superseded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dispatches', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('queued'))
    .addColumn('dispatched_at', 'bigint')
    .addColumn('lease_until', 'bigint')
    .addColumn('worker', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('queue_runs_pool')
    .ifNotExists()
    .on('queue_runs')
    .columns(['pool', 'state', 'created_at'])
    .execute();
  // A commit hands its slot to its group's oldest queued run: found by this index, not by scanning the pool.
  await db.schema
    .createIndex('queue_runs_group')
    .ifNotExists()
    .on('queue_runs')
    .columns(['group_id', 'state', 'created_at', 'run_id'])
    .execute();
  await db.schema.createIndex('results_group').ifNotExists().on('results').columns(['group_id', 'seq']).execute();
  if (dialect === 'postgres') await addCommitTxid(db);
  // The explorer's case table keeps only each key's latest attempt (a probe by key); its filters, counts and
  // facets read the covering index below instead of the wide rows. Keyed by a hash, each insert lands on a page of
  // its own: a fifth of a 5,000-case run's WAL frames (0.46 of 2.2 a case, with 8 KB pages), yet a run without it
  // took no less CPU (alternated pairs, as bench/ab.ts runs them: median ratio 1.02 over 8).
  await db.schema
    .createIndex('results_group_key')
    .ifNotExists()
    .on('results')
    .columns(['group_id', 'case_key', 'seq'])
    .execute();
  await db.schema
    .createIndex('results_group_filters')
    .ifNotExists()
    .on('results')
    .columns(['group_id', 'outcome', 'target', 'eval_path', 'error_kind', 'seq'])
    .execute();
  await addResultTest(db, dialect);
  // The explorer's runs list counts every group by status and outcome: from this index, not the table. Each of a
  // case's two status changes moves its entry; keyed by the times before the case key (a hash), the entry lands
  // beside those of the cases submitted and started with it, so a commit of many cases dirties a few pages, not one
  // each (5,000 cases: 3,350 → 1,030 WAL frames of 8 KB). runs_group_counts, keyed by case key first, made way for it:
  // created before it goes, so a reader never lacks both.
  await db.schema
    .createIndex('runs_group_tallies')
    .ifNotExists()
    .on('runs')
    .columns(['group_id', 'status', 'outcome', 'target', 'created_at', 'started_at', 'finished_at', 'case_key'])
    .execute();
  await db.schema.dropIndex('runs_group_counts').ifExists().execute();
  await db.schema
    .createTable('proctor_schema')
    .ifNotExists()
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('version', 'text', (c) => c.notNull())
    .execute();
};

/**
 * The version of the schema this build's migration brings a store to (the same for both dialects' stores). Bump it
 * with any change to the statements the migration runs: test/store/schema-version.test.ts records the statements'
 * hash beside it and fails until both are updated together.
 */
export const schemaVersion = '2';

/**
 * Whether the store records the current schema version: one statement. On a store older than the version table
 * the read fails; any failure here means "migrate", and the migration reports a real fault itself.
 */
export const schemaIsCurrent = async (db: Kysely<Database>): Promise<boolean> => {
  const recorded = await db
    .selectFrom('proctorSchema')
    .select('version')
    .where('id', '=', 1)
    .executeTakeFirst()
    .catch(() => undefined);
  return recorded?.version === schemaVersion;
};

/** Runs the whole migration, then records its version so the next open can skip it. */
export const migrateInFullAndRecord = async (db: Kysely<Database>, dialect: Dialect): Promise<void> => {
  await migrateInFull(db, dialect);
  await db
    .insertInto('proctorSchema')
    .values({ id: 1, version: schemaVersion })
    .onConflict((c) => c.column('id').doUpdateSet({ version: schemaVersion }))
    .execute();
};

/** Brings the store's schema to the current version; a store already there costs one read. */
export const migrate = async (db: Kysely<Database>, dialect: Dialect): Promise<void> => {
  if (!(await schemaIsCurrent(db))) await migrateInFullAndRecord(db, dialect);
};
