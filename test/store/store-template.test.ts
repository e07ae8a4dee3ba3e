import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { schemaVersion } from '../../src/store/schema.js';
import { openSqliteStore, storeTemplate } from '../../src/store/sqlite.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'proctor-store-template-'));
  dirs.push(dir);
  return dir;
};

/** What a SQLite file holds besides its rows: its schema, page size, journal mode and Proctor's schema version. */
const shapeOf = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return {
      schema: db.prepare('select type, name, tbl_name, sql from sqlite_master order by type, name').all(),
      pageSize: db.pragma('page_size', { simple: true }),
      journal: db.pragma('journal_mode', { simple: true }),
      version: (db.prepare('select version from proctor_schema').get() as { version: string }).version,
      userVersion: db.pragma('user_version', { simple: true }),
    };
  } finally {
    db.close();
  }
};

/** The schema a store made by its statements has (the template itself is never opened: it would grow a WAL). */
const statedSchema = async (dir: string) => {
  await made(join(dir, 'stated.db'), undefined);
  return shapeOf(join(dir, 'stated.db')).schema;
};

/** A store made at `file` through `template` (undefined: by its statements), closed again. */
const made = async (file: string, template?: string): Promise<void> => {
  await (await openSqliteStore(file, template)).close();
};

/** A copy of the build's template, changed by `sql` (run on a plain connection). */
const changedTemplate = (dir: string, sql: string): string => {
  const file = join(dir, 'template.db');
  copyFileSync(storeTemplate, file);
  const db = new Database(file);
  db.exec(sql);
  db.close();
  return file;
};

describe("a new SQLite store, copied from the build's template", () => {
  it('is the store its schema statements make: the same tables and indexes, pages, WAL mode and version', async () => {
    expect(existsSync(storeTemplate), `${storeTemplate}: npm run build makes it`).toBe(true);
    const dir = tempDir();
    await made(join(dir, 'copied.db'));
    await made(join(dir, 'stated.db'), undefined);
    // Closed whole: one file each, nothing left beside them (no WAL, no copy on its way).
    expect(readdirSync(dir).sort()).toEqual(['copied.db', 'stated.db']);
    const copied = shapeOf(join(dir, 'copied.db'));
    expect(copied).toEqual(shapeOf(join(dir, 'stated.db')));
    expect(copied).toMatchObject({ pageSize: 16384, journal: 'wal', version: schemaVersion });
  });

  it('comes from the template given, and an existing store is never replaced by it', async () => {
    const dir = tempDir();
    const template = changedTemplate(dir, 'pragma user_version = 7');
    await made(join(dir, 'new.db'), template);
    expect(shapeOf(join(dir, 'new.db')).userVersion).toBe(7);
    await made(join(dir, 'old.db'), undefined);
    await made(join(dir, 'old.db'), template);
    expect(shapeOf(join(dir, 'old.db')).userVersion).toBe(0);
  });

  it("is brought to this build's schema when the template is an older one's", async () => {
    const dir = tempDir();
    const template = changedTemplate(dir, "drop index runs_status; update proctor_schema set version = '1'");
    await made(join(dir, 'new.db'), template);
    const opened = shapeOf(join(dir, 'new.db'));
    expect(opened.version).toBe(schemaVersion);
    expect(opened.schema).toEqual(await statedSchema(dir));
  });

  it('is made once when several commands open it at the same moment: each opens the same whole store', async () => {
    const dir = tempDir();
    const file = join(dir, 'shared.db');
    // The built module, as a command opens its store; each process writes one run through it.
    const sqlite = fileURLToPath(new URL('../../dist/store/sqlite.js', import.meta.url));
    const script = `const { openSqliteStore } = await import(${JSON.stringify(sqlite)});
const store = await openSqliteStore(${JSON.stringify(file)});
await store.close();`;
    const codes = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<number | null>((resolve) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
            child.on('close', resolve);
          }),
      ),
    );
    expect(codes).toEqual([0, 0, 0, 0, 0, 0]);
    // No copy is left behind by a command that found the store made.
    expect(readdirSync(dir)).toEqual(['shared.db']);
    expect(shapeOf(file).schema).toEqual(await statedSchema(dir));
    const db = new Database(file, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });
});
