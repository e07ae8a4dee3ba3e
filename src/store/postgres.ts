import { CamelCasePlugin, Kysely, PostgresDialect, sql } from 'kysely';
import { printableUrl } from '../printable-url.js';
import { KyselyStore } from './kysely-store.js';
import { preparingPool } from './named-statements.js';
import { openFailure, StoreOpenError } from './open-error.js';
import { type Database, migrateInFullAndRecord, schemaIsCurrent } from './schema.js';

/**
 * Connections a process keeps to the store. A worker's statements are short (a commit ~0.3 ms alone), so a few
 * serve its cases; each connection more is a backend that PostgreSQL starts, maps its shared memory into and plans
 * every named statement in again (~5 ms each time of the first six, under a fleet's load). At 8 a 4-worker fleet
 * held up to 40 backends, and a fleet of 12 workers would use PostgreSQL's default `max_connections` (100) alone.
 */
export const poolSize = 4;

/**
 * pg asks when it loads whether it runs on Cloudflare Workers: by `navigator.userAgent`, or, where there is no
 * `navigator` (Node 20), by making a `new Response`, which loads Node's fetch (undici): ~35 ms of CPU at the start
 * of every process that opens the store, for nothing (Proctor's targets speak HTTP without it). A `navigator` as
 * Node 21 and later have answers it instead, for the import only.
 */
const importPg = async (): Promise<typeof import('pg')> => {
  if ('navigator' in globalThis) return import('pg');
  const userAgent = `Node.js/${process.versions.node.split('.')[0]}`;
  Object.defineProperty(globalThis, 'navigator', { value: { userAgent }, configurable: true });
  try {
    return await import('pg');
  } finally {
    Reflect.deleteProperty(globalThis, 'navigator');
  }
};

/** Opens a PostgreSQL store (creating its tables if absent): the store a fleet of workers shares. */
export const openPostgresStore = async (url: string): Promise<KyselyStore> => {
  const { default: pg } = await importPg();
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // A host that drops packets would otherwise hold a connection attempt forever.
    connectionTimeoutMillis: 10_000,
    // So an operator sees in pg_stat_activity which connections are Proctor's.
    application_name: 'proctor',
  });
  // A server that ends a connection (a restart, pg_terminate_backend) makes its client emit 'error': the pool's
  // when it is idle, the client's own when it is checked out. Unheard, either event kills the process; the
  // query under way, if any, fails with the same error and the store retries it (reconnect.ts), and the pool
  // drops the dead client.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  try {
    (await pool.connect()).release();
  } catch (error) {
    await pool.end();
    throw new StoreOpenError(
      'unreachable',
      `cannot connect to the PostgreSQL store ${printableUrl(url)}: ${openFailure(error)}`,
      'start PostgreSQL there, or set [store] url to a server this machine reaches (postgres://user@host:port/database)',
    );
  }
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: preparingPool(pool) }),
    plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })],
  });
  try {
    // Read outside the transaction: on a store without the version table the read fails, which would abort it.
    if (!(await schemaIsCurrent(db)))
      // One process at a time: PostgreSQL's CREATE … IF NOT EXISTS races with itself (two workers starting on a
      // fresh database fail on pg_type's unique index), and its DDL is transactional, so the lock covers it all.
      // A process that waited on the lock migrates again: every statement is a no-op by then.
      await db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext('proctor-migrate'))`.execute(trx);
        await migrateInFullAndRecord(trx, 'postgres');
      });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return new KyselyStore(db);
};
