import { afterEach, describe, expect, it } from 'vitest';
import type { JournalEntry, RunOwner } from '../../src/store/store.js';
import { newRun } from '../support/run-records.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const owner: RunOwner = { host: 'h', pid: 1, startedAt: 1000 };
const entry = (seq: number, stepId: string, createdAt: number): JournalEntry => ({
  instanceId: 't@r1',
  seq,
  stepId,
  attempt: 1,
  ops: [{ op: 'set', path: `outputs.${stepId}`, value: seq }],
  output: null,
  createdAt,
});

const backends = await storeBackends();

for (const backend of backends) {
  describe.skipIf(backend.unavailable)(`a store write retried after a lost connection (${backend.name})`, () => {
    let temp: BackendStore | undefined;
    afterEach(async () => temp?.remove());

    // A retry cannot know whether the lost attempt committed: a repeat of it must count as done, or the
    // claimed run is left RUNNING with nothing executing it, and the journaled step is taken for stale.
    it('counts its own earlier claim and journal entry as made, and anyone else’s as refused', async () => {
      temp = await backend.create();
      const { store } = temp;
      await store.createRuns([newRun('r1')]);
      expect(await store.claimRun('r1', owner, 5_000)).toBe(true);
      expect(await store.claimRun('r1', owner, 5_000)).toBe(true);
      expect(await store.claimRun('r1', owner, 5_001)).toBe(false);
      expect(await store.claimRun('r1', { ...owner, pid: 2 }, 5_000)).toBe(false);
      expect(await store.appendJournal(entry(1, 'a', 6_000))).toBe(true);
      expect(await store.appendJournal(entry(1, 'a', 6_000))).toBe(true);
      expect(await store.appendJournal(entry(1, 'b', 6_000))).toBe(false);
      expect(await store.appendJournal(entry(1, 'a', 6_001))).toBe(false);
      expect((await store.readJournal('t@r1')).map((e) => e.stepId)).toEqual(['a']);
    });
  });
}

const postgres = backends.find((b) => b.name === 'postgres');

describe.skipIf(!postgres || postgres.unavailable)('a PostgreSQL store whose server ends its connections', () => {
  let temp: BackendStore | undefined;
  afterEach(async () => temp?.remove());

  it('keeps answering: the dropped connections are replaced and the statements under way retried', async () => {
    temp = await (postgres as NonNullable<typeof postgres>).create();
    const { store } = temp;
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: temp.url });
    await admin.connect();
    const terminate = () =>
      admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
    try {
      await store.createRuns([newRun('r1'), newRun('r2')]);
      // The store's pooled connections sit idle: the server ends them all.
      expect((await terminate()).rowCount).toBeGreaterThan(0);
      expect((await store.getRun('r1'))?.status).toBe('QUEUED');
      // And while statements are (most likely) under way.
      const inFlight = Promise.all([
        store.claimRun('r1', owner, 7_000),
        store.listRuns({}),
        store.createRuns([newRun('r3')]),
      ]);
      await terminate();
      const [claimed, runs] = await inFlight;
      expect(claimed).toBe(true);
      expect(runs.length).toBeGreaterThanOrEqual(2);
      expect(await store.finishRun('r1', { status: 'COMPLETED', outcome: 'passed' }, 8_000)).toBe(true);
      expect((await store.listRuns({})).map((r) => `${r.runId}:${r.status}`).sort()).toEqual([
        'r1:COMPLETED',
        'r2:QUEUED',
        'r3:QUEUED',
      ]);
    } finally {
      await admin.end();
    }
  });
});
