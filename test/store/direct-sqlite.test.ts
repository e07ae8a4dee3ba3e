import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { directSections, type WriteSections } from '../../src/store/direct-sqlite.js';
import { prepareQuery } from '../../src/store/prepared.js';

interface Db {
  notes: { id: string };
}

describe('direct SQLite sections', () => {
  let dir: string;
  let sqlite: BetterSqlite3.Database;
  let db: Kysely<Db>;
  let sections: WriteSections<Db>;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'proctor-direct-'));
    sqlite = new BetterSqlite3(join(dir, 'd.db'));
    sqlite.exec('create table notes (id text primary key)');
    const prepare = (sql: string) => sqlite.prepare(sql);
    db = new Kysely<Db>({ dialect: new SqliteDialect({ database: { close: () => sqlite.close(), prepare } }) });
    sections = directSections(sqlite, prepare);
  });
  afterEach(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  const insert = (db: Kysely<Db>) => prepareQuery<[string]>(1, (id) => db.insertInto('notes').values({ id }));
  const ids = () => (sqlite.prepare('select id from notes order by id').all() as { id: string }[]).map((r) => r.id);

  it('waits for a Kysely transaction open on the connection: its statement is not swept into that rollback', async () => {
    const add = insert(db);
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    const other = db.transaction().execute(async (trx: Kysely<Db>) => {
      await add(trx, 'theirs');
      open();
      await new Promise((resolve) => setTimeout(resolve, 50));
      throw new Error('rolled back');
    });
    await opened;
    const mine = sections.single(db, async (connection) => Number((await add(connection, 'mine')).numAffectedRows));
    await expect(other).rejects.toThrow('rolled back');
    expect(await mine).toBe(1);
    expect(ids()).toEqual(['mine']);
  });

  it('commits a transaction whole, or rolls all of it back when one statement fails', async () => {
    const add = insert(db);
    await sections.transaction(db, async (trx) => {
      await add(trx, 'a');
      await add(trx, 'b');
    });
    const failed = sections.transaction(db, async (trx) => {
      await add(trx, 'c');
      await add(trx, 'a');
    });
    await expect(failed).rejects.toThrow(/UNIQUE/);
    expect(ids()).toEqual(['a', 'b']);
    expect(sqlite.inTransaction).toBe(false);
  });

  it('runs no statement that returns rows: Kysely maps those', async () => {
    const read = prepareQuery<[string]>(1, (id) => db.selectFrom('notes').selectAll().where('id', '=', id));
    await expect(sections.single(db, (connection) => read(connection, 'a'))).rejects.toThrow(/returns rows/);
  });
});
