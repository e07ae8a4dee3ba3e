import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prepareQuery } from '../../src/store/prepared.js';

interface Db {
  notes: { id: string; body: string; rank: number };
}

describe('prepared queries', () => {
  let sqlite: BetterSqlite3.Database;
  let db: Kysely<Db>;
  beforeEach(() => {
    sqlite = new BetterSqlite3(':memory:');
    sqlite.exec('create table notes (id text primary key, body text, rank integer)');
    db = new Kysely<Db>({ dialect: new SqliteDialect({ database: sqlite }) });
  });
  afterEach(async () => {
    await db.destroy();
  });
  const rows = () => sqlite.prepare('select id, body, rank from notes order by rank').all();

  it('binds each argument where the built query put it: in order, out of order, twice, beside literals', async () => {
    // 40 rows of 3 columns, as a run's inserts are chunked: 120 markers of one length.
    const width = 3;
    const insert = prepareQuery<(string | number)[]>(40 * width, (...args) =>
      db.insertInto('notes').values(
        Array.from({ length: 40 }, (_, i) => ({
          id: args[i * width] as string,
          body: args[i * width + 1] as string,
          rank: args[i * width + 2] as number,
        })),
      ),
    );
    await insert(db, ...Array.from({ length: 40 }, (_, i) => [`n${i}`, `body ${i}`, i]).flat());
    expect(rows()).toHaveLength(40);
    expect(rows()[39]).toEqual({ id: 'n39', body: 'body 39', rank: 39 });

    // The second argument before the first, the first twice, and a literal that is no argument.
    const update = prepareQuery<[string, string]>(2, (id, body) =>
      db
        .updateTable('notes')
        .set({ body, rank: 100 })
        .where((eb) => eb.or([eb('id', '=', id), eb('body', '=', id)])),
    );
    const changed = await update(db, 'n7', 'edited');
    expect(Number(changed.numAffectedRows)).toBe(1);
    expect(rows().at(-1)).toEqual({ id: 'n7', body: 'edited', rank: 100 });
  });

  it('refuses a query that drops one of its arguments, naming it', () => {
    expect(() => prepareQuery<[string, string]>(2, (id) => db.deleteFrom('notes').where('id', '=', id))).toThrow(
      /does not bind argument 1/,
    );
  });
});
