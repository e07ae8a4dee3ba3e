// A store whose WAL grows large has a thread checkpoint it, so the connection that commits does not stop to copy the
// WAL into the database file itself (src/store/wal-checkpointer.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { eventually } from '../support/eventually.js';
import { newRun } from '../support/run-records.js';

const checkpointing = { fromBytes: 1024 * 1024, everyMs: 50, watchMs: 20 };
// ~2 KB of instance spec a run: 100 runs a write, ~0.4 MB of WAL.
const runs = (from: number) =>
  Array.from({ length: 100 }, (_, i) => ({ ...newRun(`r${from + i}`), spec: { text: 'x'.repeat(2_000) } }));

describe('WAL checkpoints on a thread of their own', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'proctor-wal-'));
    file = path.join(dir, 'proctor.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const dbBytes = () => statSync(file).size;
  const walBytes = () => statSync(`${file}-wal`).size;

  it('start once the WAL passes its size: the database file takes the rows while the store has not checkpointed', async () => {
    const store = await openSqliteStore(file, checkpointing);
    const empty = dbBytes();
    await store.createRuns(runs(0));
    // Under the size: nothing copies the WAL (the store's own checkpoints are ~80 MB apart).
    await new Promise((r) => setTimeout(r, 200));
    expect(walBytes()).toBeLessThan(checkpointing.fromBytes);
    expect(dbBytes()).toBe(empty);
    for (let i = 1; i < 10; i++) await store.createRuns(runs(i * 100));
    expect(walBytes()).toBeGreaterThan(checkpointing.fromBytes);
    // ~4 MB of rows, far from the store's own checkpoint: only the thread's put them in the file.
    await eventually(async () => (dbBytes() > empty + 2 * 1024 * 1024 ? true : undefined), 10_000);
    await store.close();
    // Its connection closed last: what was left is checkpointed, and the WAL removed.
    expect(existsSync(`${file}-wal`)).toBe(false);
    const again = await openSqliteStore(file, checkpointing);
    try {
      expect(await again.listRuns({ limit: 5_000 })).toHaveLength(1_000);
    } finally {
      await again.close();
    }
  });

  it("keep the process up until the thread's connection has closed", () => {
    const script = fileURLToPath(new URL('../support/wal-store-process.ts', import.meta.url));
    const child = spawnSync(process.execPath, ['--import', 'tsx', script, file], { encoding: 'utf8', timeout: 60_000 });
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('closed\n');
    expect(child.status).toBe(0);
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('start none for a store whose WAL stays small, which its own close checkpoints', async () => {
    const store = await openSqliteStore(file, checkpointing);
    const empty = dbBytes();
    await store.createRuns(runs(0));
    await new Promise((r) => setTimeout(r, 300));
    expect(dbBytes()).toBe(empty);
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(dbBytes()).toBeGreaterThan(empty);
  });

  // ~20 KB of instance spec a run: 100 runs a write, ~2 MB of WAL.
  const largeRuns = (from: number) =>
    Array.from({ length: 100 }, (_, i) => ({ ...newRun(`r${from + i}`), spec: { text: 'x'.repeat(20_000) } }));

  it.each([
    ['a new store (16 KB pages)', undefined],
    ['a store made with 8 KB pages', 8192],
  ])('leave %s to checkpoint itself only at ~80 MB of WAL, whatever its page size', async (_, pageBytes) => {
    if (pageBytes) {
      const old = new Database(file);
      old.pragma(`page_size = ${pageBytes}`);
      old.pragma('journal_mode = WAL');
      old.close();
    }
    // No thread: only the store's own connection checkpoints.
    const store = await openSqliteStore(file, { ...checkpointing, fromBytes: 2 ** 40 });
    try {
      const empty = dbBytes();
      for (let i = 0; i < 24; i++) await store.createRuns(largeRuns(i * 100));
      // Past 5,000 pages of 8 KB (40 MB), short of 80 MB: nothing copied into the file yet.
      expect(walBytes()).toBeGreaterThan(45 * 1024 * 1024);
      expect(dbBytes()).toBe(empty);
    } finally {
      await store.close();
    }
  });
});
