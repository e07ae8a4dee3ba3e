// A SQLite store's WAL: the connection that commits checkpoints it at ~16 MB, whatever the store's page size, so the
// file stays near that size however much a run writes, and the store's close leaves none (src/store/sqlite.ts).
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { newRun } from '../support/run-records.js';

const mb = 1024 * 1024;
// ~20 KB of instance spec a run: 100 runs a write, ~2 MB of WAL.
const largeRuns = (from: number) =>
  Array.from({ length: 100 }, (_, i) => ({ ...newRun(`r${from + i}`), spec: { text: 'x'.repeat(20_000) } }));

describe('a SQLite store’s WAL', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'proctor-wal-'));
    file = path.join(dir, 'proctor.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const dbBytes = () => statSync(file).size;
  const walBytes = () => statSync(`${file}-wal`).size;

  it.each([
    ['a new store (16 KB pages)', undefined],
    ['a store made with 8 KB pages', 8192],
  ])('stays near 16 MB in %s: its commits checkpoint it into the database file as they go', async (_, pageBytes) => {
    if (pageBytes) {
      const old = new Database(file);
      old.pragma(`page_size = ${pageBytes}`);
      old.pragma('journal_mode = WAL');
      old.close();
    }
    const store = await openSqliteStore(file);
    try {
      const empty = dbBytes();
      let largest = 0;
      for (let i = 0; i < 24; i++) {
        await store.createRuns(largeRuns(i * 100));
        largest = Math.max(largest, walBytes());
      }
      // ~48 MB written: the WAL reached its checkpoint and started over, never growing by more than a write past it.
      expect(largest).toBeGreaterThan(14 * mb);
      expect(largest).toBeLessThan(20 * mb);
      // What the checkpoints copied, while the store is still open.
      expect(dbBytes()).toBeGreaterThan(empty + 24 * mb);
    } finally {
      await store.close();
    }
  });

  it('is checkpointed whole and removed when the store closes, its rows all there', async () => {
    const store = await openSqliteStore(file);
    const empty = dbBytes();
    await store.createRuns(largeRuns(0));
    // ~2 MB of WAL, short of a checkpoint: nothing in the database file yet.
    expect(walBytes()).toBeGreaterThan(mb);
    expect(dbBytes()).toBe(empty);
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(dbBytes()).toBeGreaterThan(empty + mb);
    const again = await openSqliteStore(file);
    try {
      expect(await again.listRuns({ limit: 500 })).toHaveLength(100);
    } finally {
      await again.close();
    }
  });
});
