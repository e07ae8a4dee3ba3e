import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { CamelCasePlugin, Kysely, SqliteDialect } from 'kysely';
import { KyselyStore } from './kysely-store.js';
import { type Database, migrate } from './schema.js';

/** Opens (creating if needed) a SQLite store in WAL mode, so readers never block the writer. */
export const openSqliteStore = async (file: string): Promise<KyselyStore> => {
  const { default: BetterSqlite3 } = await import('better-sqlite3');
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL is durable across a process crash in WAL mode; only a power loss can drop the last commits.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('wal_autocheckpoint = 20000');
  // 16 MB of page cache (default 2 MB): the pages a run's rows keep returning to stay in memory.
  sqlite.pragma('cache_size = -16384');
  // Kysely prepares every query it runs; the run-life statements repeat with new parameters, so reusing
  // each prepared statement by its SQL text saves a parse per write.
  const statements = new Map<string, ReturnType<typeof sqlite.prepare>>();
  const database = {
    close: () => sqlite.close(),
    prepare: (text: string) => {
      let statement = statements.get(text);
      if (!statement) {
        statement = sqlite.prepare(text);
        statements.set(text, statement);
      }
      return statement;
    },
  };
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database }),
    plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })],
  });
  await migrate(db);
  return new KyselyStore(db);
};
