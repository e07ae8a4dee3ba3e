// Canceling a whole group (the explorer's cancel, a follower's Ctrl-C) costs a few set-based statements however
// large the group: its runs are never read out. Counted on PostgreSQL's wire, not timed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelGroup } from '../../src/runners/cancel-run.js';
import { LocalRunner } from '../../src/runners/local.js';
import { QueueRunner } from '../../src/runners/queue.js';
import type { Runner } from '../../src/runners/runner.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { NewRun, Store } from '../../src/store/store.js';
import { type PgWireCounter, startPgWireCounter } from '../support/pg-wire-counter.js';
import { newRun, readRun } from '../support/run-records.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const size = 20_000;
const owner = { host: 'elsewhere', pid: 1, startedAt: 1 };
const queued = (runId: string, groupId: string, queue: boolean): NewRun => ({
  ...newRun(runId, owner),
  groupId,
  ...(queue ? { queue: { pool: 'cancel-group', limits: [], work: {} } } : {}),
});

/** `size` QUEUED runs in group `big`, plus a finished one in it and a QUEUED one in another group. */
const fill = async (store: Store, queue: boolean): Promise<void> => {
  for (let from = 0; from < size; from += 1000)
    await store.createRuns(Array.from({ length: 1000 }, (_, i) => queued(`big.${from + i}`, 'big', queue)));
  await store.createRuns([queued('big.done', 'big', queue), queued('other.1', 'other', queue)]);
  await store.finishRun('big.done', { status: 'COMPLETED', outcome: 'passed' }, Date.now());
};

const unaffected = async (store: Store): Promise<void> => {
  expect((await readRun(store, 'big.done')).status).toBe('COMPLETED');
  expect(await readRun(store, 'other.1')).toMatchObject({ status: 'QUEUED', cancelRequestedAt: null });
};

for (const backend of await storeBackends()) {
  describe.skipIf(backend.unavailable !== undefined)(`cancel of a ${size}-run group (${backend.name})`, () => {
    let db: BackendStore;
    beforeAll(async () => {
      db = await backend.create();
    });
    afterAll(async () => {
      await db.remove();
    });

    if (backend.name === 'sqlite')
      it('records the request for every run in one call; a local run is its owner to end', async () => {
        await fill(db.store, false);
        const runner: Runner = new LocalRunner(db.store, { workers: 1 });
        expect(await cancelGroup(runner, db.store, 'big')).toBe(size);
        await runner.stop();
        const asked = await db.store.listRuns({ groupId: 'big', statuses: ['QUEUED'], limit: size + 1 });
        expect(asked).toHaveLength(size);
        expect(asked.every((r) => r.cancelRequestedAt !== null)).toBe(true);
        await unaffected(db.store);
      });

    if (backend.name === 'postgres')
      it('ends the queued runs and flags the one a worker holds, in 2 statements and a few bytes back', async () => {
        await fill(db.store, true);
        const ledger = db.store.queueLedger();
        const held = await ledger.claim('big.7', 'w1', owner, Date.now(), 60_000);
        expect(held.kind).toBe('claimed');
        let counter: PgWireCounter | undefined;
        let counted: Store | undefined;
        try {
          const url = new URL(db.url);
          counter = await startPgWireCounter(url.hostname, Number(url.port || 5432));
          url.host = `127.0.0.1:${counter.port}`;
          counted = await openPostgresStore(url.toString());
          const runner = new QueueRunner(counted, {
            redis: 'redis://127.0.0.1:1',
            pool: 'cancel-group',
            concurrency: 1,
            lockMs: 60_000,
            stalledIntervalMs: 30_000,
            maxStalled: 2,
            drainTimeoutMs: 0,
            redisDownExitMs: 60_000,
          });
          counter.reset();
          expect(await cancelGroup(runner, counted, 'big')).toBe(size);
          // The request, then the end of what no worker holds: no run read out, however many.
          expect(counter.statements).toBe(2);
          expect(counter.bytesBack).toBeLessThan(4096);
          await runner.stop();
        } finally {
          await counted?.close();
          await counter?.close();
        }
        expect(await db.store.countActive('big')).toBe(1);
        const canceled = await db.store.listRuns({ groupId: 'big', statuses: ['CANCELED'], limit: size + 1 });
        expect(canceled).toHaveLength(size - 1);
        expect(await readRun(db.store, 'big.7')).toMatchObject({ status: 'RUNNING' });
        // The worker holding it learns of the cancel on its next renewal, and the rest are
        // never dispatched again.
        expect(await ledger.renew(['big.7'], 'w1', Date.now(), 60_000)).toEqual({ held: ['big.7'], cancel: ['big.7'] });
        // Were its worker gone, only the held run would be sent again: the canceled ones are done in the ledger.
        expect((await ledger.lost('cancel-group', Date.now() + 120_000, 1)).map((j) => j.runId)).toEqual(['big.7']);
        await unaffected(db.store);
      });
  });
}
