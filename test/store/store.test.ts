import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { JournalEntry, RunOwner, Store } from '../../src/store/store.js';
import { newRun } from '../support/run-records.js';
import { openTempStore, type TempStore } from '../support/temp-store.js';

const owner: RunOwner = { host: 'h', pid: 1, startedAt: 1000 };
const other: RunOwner = { host: 'h', pid: 2, startedAt: 2000 };
const entry = (instanceId: string, seq: number, stepId: string): JournalEntry => ({
  instanceId,
  seq,
  stepId,
  attempt: 1,
  ops: [{ op: 'set', path: stepId, value: seq }],
  output: null,
  createdAt: Date.now(),
});

describe('SQLite store: the run index shared by several connections', () => {
  let temp: TempStore;
  let store: Store;
  beforeEach(async () => {
    temp = await openTempStore();
    store = temp.store;
  });
  afterEach(() => temp.remove());

  it("records a run's submitter as its owner from the start", async () => {
    await store.createRuns([newRun('r1', owner), newRun('r2')]);
    const r1 = await store.getRun('r1');
    expect(r1?.status).toBe('QUEUED');
    expect(r1?.owner).toEqual(owner);
    expect(r1?.seenAt).toBeGreaterThan(0);
    expect((await store.getRun('r2'))?.owner).toBeNull();
  });

  it('lets exactly one of two connections claim a run and complete a journal position', async () => {
    const second = await temp.open();
    await store.createRuns([newRun('r1')]);
    const claims = await Promise.all([store.claimRun('r1', owner, 1), second.claimRun('r1', other, 2)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    const appends = await Promise.all([
      store.appendJournal(entry('t@r1', 1, 'a')),
      second.appendJournal(entry('t@r1', 1, 'b')),
    ]);
    expect(appends.filter(Boolean)).toHaveLength(1);
    expect((await store.readJournal('t@r1')).map((e) => e.seq)).toEqual([1]);
  });

  it('holds a grouped write for its window, and commits it at once when told none are coming', async () => {
    const reader = new BetterSqlite3(temp.file, { readonly: true });
    const status = (): unknown => reader.prepare("select status from runs where run_id = 'r1'").pluck().get();
    try {
      await store.createRuns([newRun('r1')]);
      const claimed = store.claimRun('r1', owner, Date.now(), 'grouped');
      // Waiting in its window (20 ms) for others to share its commit.
      expect(status()).toBe('QUEUED');
      store.commitGrouped();
      // Committed on the loop's next turn, not at the window's end.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(status()).toBe('RUNNING');
      expect(await claimed).toBe(true);
    } finally {
      reader.close();
    }
  });

  it('keeps the first terminal status against every later write', async () => {
    await store.createRuns([newRun('r1', owner)]);
    expect(await store.finishRun('r1', { status: 'COMPLETED', outcome: 'passed' }, 10)).toBe(true);
    const done = await store.getRun('r1');
    expect(await store.finishRun('r1', { status: 'FAILED', outcome: 'error' }, 20)).toBe(false);
    expect(await store.claimRun('r1', owner, 30)).toBe(false);
    expect(await store.requestCancel('r1', 40)).toBe(false);
    await store.heartbeat(owner, 50);
    expect(await store.failOrphans({ owner }, { status: 'FAILED' }, 60)).toEqual([]);
    expect(await store.getRun('r1')).toEqual(done);
  });

  it("hands a cancel request to the run's owner only, and keeps the first request time", async () => {
    await store.createRuns([newRun('mine', owner), newRun('theirs', other)]);
    expect(await store.requestCancel('mine', 100)).toBe(true);
    expect(await store.requestCancel('mine', 200)).toBe(true);
    expect(await store.cancelRequested(owner)).toEqual(['mine']);
    expect(await store.cancelRequested(other)).toEqual([]);
    expect((await store.getRun('mine'))?.cancelRequestedAt).toBe(100);
  });

  it("renews only the heartbeating owner's unfinished runs", async () => {
    await store.createRuns([newRun('mine', owner), newRun('theirs', other), newRun('done', owner)]);
    await store.finishRun('done', { status: 'CANCELED' }, 1);
    const before = await store.getRun('theirs');
    await store.heartbeat(owner, 9_999_999_999_999);
    expect((await store.getRun('mine'))?.seenAt).toBe(9_999_999_999_999);
    expect((await store.getRun('theirs'))?.seenAt).toBe(before?.seenAt);
    expect((await store.getRun('done'))?.seenAt).not.toBe(9_999_999_999_999);
  });

  it('groups unfinished runs by owner and fails only the selected, stale ones', async () => {
    await store.createRuns([newRun('a', owner), newRun('b', owner), newRun('c', other), newRun('d')]);
    const owners = await store.runOwners();
    expect(new Map(owners.map((o) => [o.owner?.pid ?? null, o.runs]))).toEqual(
      new Map([
        [1, 2],
        [2, 1],
        [null, 1],
      ]),
    );
    const finish = {
      status: 'FAILED',
      outcome: 'error',
      error: { kind: 'internal', message: 'gone', retryable: false },
    } as const;
    expect(await store.failOrphans({ owner, seenBefore: 0 }, finish, 5)).toEqual([]);
    const failed = await store.failOrphans({ owner }, finish, 5);
    expect(failed.map((r) => r.runId).sort()).toEqual(['a', 'b']);
    expect((await store.failOrphans({ owner: null }, finish, 5)).map((r) => r.runId)).toEqual(['d']);
    expect((await store.getRun('c'))?.status).toBe('QUEUED');
  });

  it("keys a run's group counts by its times before its case key, and re-indexes a store keyed the earlier way", async () => {
    const columns = () => {
      const db = new BetterSqlite3(temp.file, { readonly: true });
      try {
        const names = (db.pragma("index_list('runs')") as { name: string }[]).map((i) => i.name);
        const counts = names.filter((n) => n.startsWith('runs_group'));
        return counts.map((n) => (db.pragma(`index_info('${n}')`) as { name: string }[]).map((c) => c.name));
      } finally {
        db.close();
      }
    };
    // A status change moves the entry within its group's time order, near the entries its neighbours moved in the
    // same commit: keyed by a case key (a hash), each of a case's two changes dirtied a page of its own.
    const timeOrdered = [
      'group_id',
      'status',
      'outcome',
      'target',
      'created_at',
      'started_at',
      'finished_at',
      'case_key',
    ];
    expect(columns()).toEqual([timeOrdered]);
    const old = new BetterSqlite3(temp.file);
    old.exec(
      'drop index runs_group_tallies; create index runs_group_counts on runs (group_id, status, outcome, target, case_key, created_at, started_at, finished_at); drop table proctor_schema',
    );
    old.close();
    await temp.open();
    expect(columns()).toEqual([timeOrdered]);
  });

  it('adds columns a store created by an earlier version lacks', async () => {
    const file = `${temp.dir}/old.db`;
    const old = new BetterSqlite3(file);
    old.exec(
      'create table runs (run_id text primary key, group_id text not null, task_id text not null, instance_id text not null, status text not null, target text, case_key text, outcome text, score double precision, error_kind text, error_message text, error_retryable integer, metadata text not null, owner_host text, owner_pid integer, owner_started_at bigint, seen_at bigint, created_at bigint not null, started_at bigint, finished_at bigint)',
    );
    old.close();
    const upgraded = await openSqliteStore(file);
    await upgraded.createRuns([newRun('r1', owner)]);
    expect(await upgraded.requestCancel('r1', 7)).toBe(true);
    expect((await upgraded.getRun('r1'))?.cancelRequestedAt).toBe(7);
    await upgraded.close();
  });
});
