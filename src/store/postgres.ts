import { CamelCasePlugin, Kysely, PostgresDialect } from 'kysely';
import { KyselyStore } from './kysely-store.js';
import { type Database, migrate } from './schema.js';

/** Opens a PostgreSQL store (creating its tables if absent): the store a fleet of workers shares. */
export const openPostgresStore = async (url: string): Promise<KyselyStore> => {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })],
  });
  try {
    await migrate(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return new KyselyStore(db);
};
