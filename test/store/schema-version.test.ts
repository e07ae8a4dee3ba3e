import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { CamelCasePlugin, Kysely, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.js';
import { migrate, type Database as StoreDatabase, schemaVersion } from '../../src/store/schema.js';
import { emptyPostgresDatabase, storeBackends } from '../support/store-backends.js';
import { openTempStore, type TempStore } from '../support/temp-store.js';

/** A store of one backend, opened by Proctor, and a plain connection beside it to inspect and damage its schema. */
interface SchemaProbe {
  open(): Promise<void>;
  rows(text: string): Promise<Record<string, unknown>[]>;
  run(text: string): Promise<void>;
  remove(): Promise<void>;
}

const indexNamed = {
  sqlite: `select name from sqlite_master where type = 'index' and name = 'runs_status'`,
  postgres: `select indexname as name from pg_indexes where indexname = 'runs_status'`,
};

const sqliteProbe = async (): Promise<SchemaProbe> => {
  const temp: TempStore = await openTempStore();
  const raw = new Database(temp.file);
  return {
    open: async () => {
      await temp.open();
    },
    rows: async (text) => raw.prepare(text).all() as Record<string, unknown>[],
    run: async (text) => {
      raw.exec(text);
    },
    remove: async () => {
      raw.close();
      await temp.remove();
    },
  };
};

const postgresProbe = async (): Promise<SchemaProbe> => {
  const database = await emptyPostgresDatabase();
  const stores = [await openPostgresStore(database.url)];
  const raw = new pg.Client({ connectionString: database.url });
  await raw.connect();
  return {
    open: async () => {
      stores.push(await openPostgresStore(database.url));
    },
    rows: async (text) => (await raw.query(text)).rows,
    run: async (text) => {
      await raw.query(text);
    },
    remove: async () => {
      await raw.end();
      await Promise.all(stores.map((s) => s.close()));
      await database.drop();
    },
  };
};

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');
const backends = [
  { name: 'sqlite' as const, probe: sqliteProbe, skip: undefined },
  { name: 'postgres' as const, probe: postgresProbe, skip: postgres?.unavailable },
];

describe.each(backends)('schema version ($name)', ({ name, probe, skip }) => {
  let store: SchemaProbe | undefined;
  afterEach(async () => {
    await store?.remove();
    store = undefined;
  });
  const recorded = async (s: SchemaProbe) => await s.rows('select id, version from proctor_schema');
  const hasIndex = async (s: SchemaProbe) => (await s.rows(indexNamed[name])).length === 1;

  it.skipIf(skip)('records the version on the first open, and a later open runs no migration', async () => {
    store = await probe();
    expect(await recorded(store)).toEqual([{ id: 1, version: schemaVersion }]);
    // A migration would recreate the index: the second open leaves it dropped.
    await store.run('drop index runs_status');
    await store.open();
    expect(await hasIndex(store)).toBe(false);
  });

  it.skipIf(skip)('migrates a store that records another version, then records this one', async () => {
    store = await probe();
    await store.run('drop index runs_status');
    await store.run(`update proctor_schema set version = 'older'`);
    await store.open();
    expect(await hasIndex(store)).toBe(true);
    expect(await recorded(store)).toEqual([{ id: 1, version: schemaVersion }]);
  });

  it.skipIf(skip)('migrates a store made before the version table', async () => {
    store = await probe();
    await store.run('drop index runs_status');
    await store.run('drop table proctor_schema');
    await store.open();
    expect(await hasIndex(store)).toBe(true);
    expect(await recorded(store)).toEqual([{ id: 1, version: schemaVersion }]);
  });
});

describe('schema version guard', () => {
  it('changes with the statements the migration runs', async () => {
    // Every statement a fresh store's migration runs, as text (values are parameters, so the version is not in it).
    const statements: string[] = [];
    const db = new Kysely<StoreDatabase>({
      dialect: new SqliteDialect({ database: new Database(':memory:') }),
      plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })],
      log: (event) => {
        if (event.level === 'query') statements.push(event.query.sql);
      },
    });
    await migrate(db, 'sqlite');
    await db.destroy();
    const hash = createHash('sha256').update(statements.join('\n')).digest('hex').slice(0, 16);
    // A changed migration changes the hash: bump schemaVersion in src/store/schema.ts and record both here, or stores
    // that recorded the old version would never run the new statements.
    expect({ schemaVersion, hash }).toEqual({ schemaVersion: '2', hash: 'e0bed68866fa0149' });
  });
});
