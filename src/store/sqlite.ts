import { constants, copyFileSync, existsSync, linkSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3, { type Database as SqliteDatabase } from 'better-sqlite3';
import { CamelCasePlugin, Kysely, SqliteDialect } from 'kysely';
import { once } from '../once.js';
import { directSections } from './direct-sqlite.js';
import { KyselyStore } from './kysely-store.js';
import { openFailure, StoreOpenError } from './open-error.js';
import { type Database, migrate } from './schema.js';

const hint =
  'point [store] url at a place this user can write, e.g. url = "sqlite:.proctor/proctor.db" (relative to the project root)';

/**
 * Creates `dir` and its missing parents one by one. Node's recursive mkdir spins forever where the kernel
 * answers ENOENT for a parent that exists (under /proc); a plain mkdir fails there with that error.
 */
const makeDirs = (dir: string): void => {
  const missing: string[] = [];
  for (let at = dir; !existsSync(at); at = dirname(at)) {
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (error) {
      // Another process opening the same store may have created it meanwhile.
      if (!((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(d).isDirectory())) throw error;
    }
  }
};

/** What the `bindings` package (better-sqlite3's own addon finder) takes: `path` returns where it found the addon. */
type FindAddon = (options: { bindings: string; module_root: string; path: true }) => string;

/**
 * Where the better-sqlite3 package whose package.json is `manifest` has its native addon. The bundle holds
 * better-sqlite3's JavaScript (scripts/bundle.js), so the package is not resolved, read and compiled on each start;
 * the addon stays in the package's folder, and given its path better-sqlite3 skips `bindings`, which looks for it
 * by the calling file's package (in the bundle, Proctor's own) through a dozen build folders. An install builds it
 * into build/Release; one built elsewhere is found by that search, from the package's folder.
 */
export const sqliteAddonFile = (manifest: string): string => {
  const built = join(dirname(manifest), 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(built)) return built;
  const findAddon = createRequire(manifest)('bindings') as FindAddon;
  return findAddon({ bindings: 'better_sqlite3.node', module_root: dirname(manifest), path: true });
};

const sqliteAddon = once(() => sqliteAddonFile(createRequire(import.meta.url).resolve('better-sqlite3/package.json')));

/**
 * A new store's pages: 16 KB (the default is 4). A case's result and journal rows are ~3 KB each, and fewer, fuller
 * pages make the file smaller (8 KB: ~13% smaller than 4; 16 KB: 5% smaller than 8) and each commit's WAL frames
 * fewer, each written with two pwrite calls (bench/ab.ts at 5,000 cases, against 8 KB: 2.5% less CPU, lower in 7 of
 * 8 pairs; 32 KB: 2.1%). An existing store keeps its own (WAL mode fixes it).
 */
const newPageBytes = 16 * 1024;

/**
 * The WAL at which the writing connection checkpoints itself, ~16 MB whatever the store's page size (SQLite's own
 * 1,000 pages of a new store). Each checkpoint copies the pages changed since the one before and lets the WAL start
 * over, so the file stays that size and its pages are written again rather than new ones taken from the kernel.
 * Against a WAL let grow to ~32 MB and then checkpointed by a thread of its own (which cost ~80 ms of CPU to start),
 * bench/ab.ts: 5,000 cases -j 50, 7.6% less CPU (lower in 8 of 8 pairs), wall 1.01, peak RSS 124 -> 115 MB; 1,000
 * cases: CPU the same, wall 0.99 (the close has less to copy); 20,000 and 100,000 cases: within the noise. 4 and 8
 * MB did no better than 16. A checkpoint on the committing connection waits for the disk (two fsync calls, ~3 ms
 * each here), which an 80 MB one made ~325 ms.
 */
const walCheckpointBytes = 16 * 1024 * 1024;

/**
 * Every new store's first state, made once at build time by scripts/store-template.js with this module's own
 * openSqliteStore: its pages (newPageBytes), WAL mode and the schema of this build. A new store is a copy of it, one
 * system call where its ~30 statements of DDL took ~11 ms of CPU, what a new store's first command (a new checkout's,
 * every CI job's) paid over an existing store's: copied, a one-case eval run into a new store takes 0.966-0.971 of
 * the CPU (perf stat, alternated pairs: lower in 20 of 24, twice). Two folders below the package root, as the bundle
 * and the built module both are.
 */
export const storeTemplate = fileURLToPath(new URL('../../dist/store-template.db', import.meta.url));

/**
 * Creates `file`, when it does not exist yet, as a copy of the template: copied beside it, then linked into place,
 * so a command opening the same store meanwhile finds a whole copy or none (a link never replaces a file). Without
 * a template (a build that made none), or where the file system cannot link, SQLite creates the file and migrate()
 * its schema; from a template older than this build's schema migrate() brings it up to date.
 */
const copyTemplate = (file: string, template: string): void => {
  if (!existsSync(template) || existsSync(file)) return;
  const part = `${file}.${process.pid}.new`;
  try {
    copyFileSync(template, part, constants.COPYFILE_FICLONE);
    linkSync(part, file);
  } catch {
    // Made by another command meanwhile, or no links here: opening it (or making it) is SQLite's.
  } finally {
    rmSync(part, { force: true });
  }
};

/** The SQLite file, opened in WAL mode (so readers never block the writer), or why it cannot be. */
const openFile = async (file: string, template: string | undefined): Promise<SqliteDatabase> => {
  const nativeBinding = sqliteAddon();
  let sqlite: SqliteDatabase | undefined;
  try {
    if (file !== ':memory:') {
      makeDirs(dirname(file));
      if (template !== undefined) copyTemplate(file, template);
    }
    sqlite = new BetterSqlite3(file, { nativeBinding });
    // A no-op on an existing store.
    sqlite.pragma(`page_size = ${newPageBytes}`);
    // The first statement that reads the file (setting page_size does not): a file that is not a database fails here.
    sqlite.pragma('journal_mode = WAL');
    return sqlite;
  } catch (error) {
    sqlite?.close();
    throw new StoreOpenError('cannot_create', `cannot open the SQLite store ${file}: ${openFailure(error)}`, hint);
  }
};

/**
 * Opens (creating if needed) a SQLite store. A new one is copied from `template` (storeTemplate); with none, it is
 * made by its schema's statements (how scripts/store-template.js makes the template).
 */
export const openSqliteStore = async (
  file: string,
  template: string | undefined = storeTemplate,
): Promise<KyselyStore> => {
  const sqlite = await openFile(file, template);
  // NORMAL is durable across a process crash in WAL mode; only a power loss can drop the last commits.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 10000');
  // Counted in the store's own pages: 1,000 of a new store's, 2,000 of one made with 8 KB pages.
  const pageBytes = sqlite.pragma('page_size', { simple: true }) as number;
  sqlite.pragma(`wal_autocheckpoint = ${Math.round(walCheckpointBytes / pageBytes)}`);
  // 4 MB of page cache (default 2 MB): a run's writes return to few pages (the right edges of its tables and
  // indexes, the runs it updates); 16 MB cost the same instructions at 5,000 cases (valgrind, 11.93 and 11.87 G) and
  // 6-12 MB more peak RSS, which the run's young generation puts to better use (src/cli/commands/eval-run.ts).
  sqlite.pragma('cache_size = -4096');
  // Kysely prepares every query it runs; the run-life statements repeat with new parameters, so reusing
  // each prepared statement by its SQL text saves a parse per write.
  const statements = new Map<string, ReturnType<typeof sqlite.prepare>>();
  const prepare = (text: string) => {
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
  const database = { close: () => sqlite.close(), prepare };
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database }),
    plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })],
  });
  await migrate(db, 'sqlite');
  // Grouped writes (an eval case's claim and finish) wait up to 20 ms to share a commit: its WAL pages are most of
  // what a commit costs, and nothing waits on them but their report. 50 ms took 6-13% less CPU at 5,000 cases -j 50
  // (a commit's ~50 WAL frames of 8 KB are mostly pages the commits before wrote too) but 7-9% more wall: the cases in
  // flight fell from ~49 to ~47 and each took ~4 ms longer (alternated pairs); 30 ms was no different from 20. The
  // longer part is the model call itself (its p90 56 -> 67 ms): the replies come in bursts, one commit's worth at a
  // time, and wait on each other; a submit window twice as long, so no slot waits for a case, changed nothing.
  return new KyselyStore(db, directSections(sqlite, prepare), 20);
};
