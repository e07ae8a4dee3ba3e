import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import type { Kysely, QueryResult } from 'kysely';

/** Runs one statement that returns no rows, with its bound values, and says how many rows it changed. */
export type RunStatement = (sql: string, parameters: readonly unknown[]) => QueryResult<unknown>;

/** The connection-bound Kysely instances a direct section holds, each with the handle its statements may run on. */
const held = new WeakMap<object, RunStatement>();

/**
 * How a prepared statement (prepared.ts) may skip Kysely on `executor`: defined while a direct section holds
 * that connection, else undefined (PostgreSQL, or a connection Kysely lends to anyone else).
 */
export const directRunner = (executor: object): RunStatement | undefined => held.get(executor);

/** Where the writes of a store run: in one transaction, or one statement on its own. */
export interface WriteSections<DB> {
  transaction<T>(db: Kysely<DB>, fn: (db: Kysely<DB>) => Promise<T>): Promise<T>;
  single<T>(db: Kysely<DB>, fn: (db: Kysely<DB>) => Promise<T>): Promise<T>;
}

/** Kysely's own transaction, and a single statement on the pool: PostgreSQL's. */
export const kyselySections = <DB>(): WriteSections<DB> => ({
  transaction: (db, fn) => db.transaction().execute(fn),
  single: (db, fn) => fn(db),
});

/**
 * SQLite's writes, run straight on its handle while Kysely's one connection is held. Through Kysely each
 * statement of a run's life cost ~3 µs of CPU and ~4.5 KB of garbage in executors, providers and promises (its
 * transaction wraps every query in a fresh executor), several times what better-sqlite3 needs to run it. Held
 * through Kysely's connection, so a Kysely transaction open elsewhere (a createRuns) waits, as it did before;
 * statements that read rows still go through Kysely, which maps their column names.
 */
export const directSections = <DB>(sqlite: SqliteDatabase, prepare: (sql: string) => Statement): WriteSections<DB> => {
  const run: RunStatement = (sql, parameters) => {
    const statement = prepare(sql);
    if (statement.reader) throw new Error(`a direct section runs no query that returns rows: ${sql}`);
    return { numAffectedRows: BigInt(statement.run(parameters).changes), rows: [] };
  };
  const single = <T>(db: Kysely<DB>, fn: (db: Kysely<DB>) => Promise<T>): Promise<T> =>
    db.connection().execute(async (connection) => {
      held.set(connection, run);
      try {
        return await fn(connection);
      } finally {
        held.delete(connection);
      }
    });
  return {
    single,
    transaction: (db, fn) =>
      single(db, async (connection) => {
        run('begin', []);
        try {
          const result = await fn(connection);
          run('commit', []);
          return result;
        } catch (error) {
          // A failed commit may have ended the transaction itself (SQLite rolls back on some errors).
          if (sqlite.inTransaction) run('rollback', []);
          throw error;
        }
      }),
  };
};
