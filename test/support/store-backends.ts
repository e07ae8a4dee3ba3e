import { randomBytes } from 'node:crypto';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/store.js';
import { openTempStore } from './temp-store.js';

/** A fresh, empty store of one backend; `url` is what a proctor.toml `[store] url` would say. */
export interface BackendStore {
  url: string;
  store: Store;
  /** Another connection to the same store. */
  open(): Promise<Store>;
  remove(): Promise<void>;
}

export interface StoreBackend {
  name: 'sqlite' | 'postgres';
  /** Why this backend cannot run here, when it cannot (tests skip with this reason). */
  unavailable?: string;
  create(): Promise<BackendStore>;
}

/** The server the machines run; PROCTOR_TEST_PG_URL points elsewhere. Its `test` database is only a lobby. */
export const postgresUrl = process.env.PROCTOR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const withLobby = async <T>(fn: (query: (sql: string) => Promise<unknown>) => Promise<T>): Promise<T> => {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    return await fn((sql) => client.query(sql));
  } finally {
    await client.end();
  }
};

const postgresProblem = async (): Promise<string | undefined> => {
  try {
    await withLobby((query) => query('select 1'));
    return undefined;
  } catch (error) {
    return `PostgreSQL is not reachable at ${postgresUrl}: ${(error as Error).message}`;
  }
};

/** A new database with no tables yet: its url, and how to drop it. */
export const emptyPostgresDatabase = async (): Promise<{ url: string; drop: () => Promise<void> }> => {
  const name = `proctor_test_${randomBytes(6).toString('hex')}`;
  await withLobby((query) => query(`create database ${name}`));
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withLobby((query) => query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
};

/** Each test gets its own database, dropped afterwards, so tests never see each other's runs. */
const createPostgres = async (): Promise<BackendStore> => {
  const database = await emptyPostgresDatabase();
  const url = new URL(database.url);
  const opened: Store[] = [];
  const open = async (): Promise<Store> => {
    const store = await openPostgresStore(url.toString());
    opened.push(store);
    return store;
  };
  return {
    url: url.toString(),
    store: await open(),
    open,
    remove: async () => {
      await Promise.all(opened.map((s) => s.close().catch(() => {})));
      await database.drop();
    },
  };
};

const createSqlite = async (): Promise<BackendStore> => {
  const temp = await openTempStore();
  return { url: `sqlite:${temp.file}`, store: temp.store, open: temp.open, remove: temp.remove };
};

/** SQLite always; PostgreSQL when its server answers, else marked unavailable with the reason. */
export const storeBackends = async (): Promise<StoreBackend[]> => {
  const problem = await postgresProblem();
  return [
    { name: 'sqlite', create: createSqlite },
    { name: 'postgres', ...(problem ? { unavailable: problem } : {}), create: createPostgres },
  ];
};
