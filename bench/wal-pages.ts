// Where a SQLite store's commits write: every page a commit changes is one frame appended to the WAL, and a
// commit costs about as much per frame as its statements together (10 us or so each, on /dev/shm). Counting the
// frames by the table or index that owns their page shows which writes and which indexes a commit pays for.
import { readFileSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';

type Sqlite = typeof BetterSqlite3;

/**
 * Keeps every frame in the WAL until the store closes: no checkpoint (the store asks for one every ~16 MB of WAL),
 * so `walPages` finds them all. Call before opening the store.
 */
export const keepWal = (sqlite: Sqlite): void => {
  const proto = sqlite.prototype as { pragma: (source: string, options?: unknown) => unknown };
  const pragma = proto.pragma;
  proto.pragma = function (this: unknown, source: string, options?: unknown) {
    return pragma.call(this, source.startsWith('wal_autocheckpoint') ? 'wal_autocheckpoint = 0' : source, options);
  };
};

export interface WalPages {
  frames: number;
  commits: number;
  /** Frames by the table or index owning their page (`sqlite_schema` for page 1: the file's size in its header). */
  byOwner: [string, number][];
}

/** The frames in `file`'s WAL, read while the store is still open (the last connection to close removes it). */
export const walPages = (sqlite: Sqlite, file: string): WalPages => {
  const wal = readFileSync(`${file}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const db = new sqlite(file, { readonly: true });
  const owners = new Map<number, string>();
  try {
    for (const r of db.prepare('select name, pageno from dbstat').all() as { name: string; pageno: number }[])
      owners.set(r.pageno, r.name);
  } finally {
    db.close();
  }
  const byOwner = new Map<string, number>();
  let frames = 0;
  let commits = 0;
  // A 32-byte header, then frames of a 24-byte header (page number; the database size, non-zero on a commit) and a page.
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    frames++;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
    const owner = owners.get(wal.readUInt32BE(at)) ?? '(free)';
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1);
  }
  return { frames, commits, byOwner: [...byOwner].sort((a, b) => b[1] - a[1]) };
};
