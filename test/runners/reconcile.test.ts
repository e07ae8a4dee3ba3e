import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { currentOwner } from '../../src/runners/owner.js';
import { reconcileOrphans } from '../../src/runners/reconcile.js';
import type { NewRun, RunOwner, Store } from '../../src/store/store.js';
import { newRun } from '../support/run-records.js';
import { openTempStore, type TempStore } from '../support/temp-store.js';

let seq = 0;
const aRun = (owner?: RunOwner): NewRun => newRun(`r${++seq}`, owner);

/** The pid of a process that has exited and been reaped. */
const deadPid = (): number => spawnSync('true').pid as number;

describe('reconcileOrphans', () => {
  let temp: TempStore;
  let store: Store;
  beforeEach(async () => {
    temp = await openTempStore();
    store = temp.store;
  });
  afterEach(() => temp.remove());

  const status = async (runId: string) => (await store.getRun(runId))?.status;

  it("spares a live owner's QUEUED and RUNNING runs", async () => {
    const queued = aRun(currentOwner());
    const running = aRun(currentOwner());
    await store.createRuns([queued, running]);
    expect(await store.claimRun(running.runId, currentOwner(), Date.now())).toBe(true);
    expect(await reconcileOrphans(store)).toEqual([]);
    expect(await status(queued.runId)).toBe('QUEUED');
    expect(await status(running.runId)).toBe('RUNNING');
  });

  it('fails the runs of an owner whose process has exited, with the reason', async () => {
    const owner = { ...currentOwner(), pid: deadPid() };
    const queued = aRun(owner);
    const running = aRun(owner);
    await store.createRuns([queued, running]);
    await store.claimRun(running.runId, owner, Date.now());
    const orphans = await reconcileOrphans(store);
    expect(orphans.map((o) => o.run.runId).sort()).toEqual([queued.runId, running.runId].sort());
    for (const runId of [queued.runId, running.runId]) {
      const run = await store.getRun(runId);
      expect(run?.status).toBe('FAILED');
      expect(run?.outcome).toBe('error');
      expect(run?.error).toEqual({
        kind: 'internal',
        message: `orphaned: its owner ${hostname()} pid ${owner.pid} has exited`,
        retryable: false,
      });
    }
  });

  it('takes a live pid with another start time for a reused pid: the owner is gone', async () => {
    const impostor = aRun({ ...currentOwner(), startedAt: currentOwner().startedAt - 3_600_000 });
    await store.createRuns([impostor]);
    const [orphan] = await reconcileOrphans(store);
    expect(orphan?.reason).toContain('the pid now names another process');
    expect(await status(impostor.runId)).toBe('FAILED');
  });

  it('fails a non-terminal run that names no owner', async () => {
    const ownerless = aRun();
    await store.createRuns([ownerless]);
    const [orphan] = await reconcileOrphans(store);
    expect(orphan?.reason).toContain('names no owner');
    expect(await status(ownerless.runId)).toBe('FAILED');
  });

  it("judges another host's runs by their lease alone", async () => {
    const remote = aRun({ host: 'elsewhere', pid: process.pid, startedAt: 1 });
    await store.createRuns([remote]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await reconcileOrphans(store, { leaseMs: 60_000 })).toEqual([]);
    const [orphan] = await reconcileOrphans(store, { leaseMs: 200 });
    expect(orphan?.reason).toBe(`its owner elsewhere pid ${process.pid} has not been seen within its lease of 200 ms`);
    expect(await status(remote.runId)).toBe('FAILED');
  });

  it('leaves terminal runs alone', async () => {
    const owner = { ...currentOwner(), pid: deadPid() };
    const done = aRun(owner);
    await store.createRuns([done]);
    await store.finishRun(done.runId, { status: 'COMPLETED', outcome: 'passed' }, Date.now());
    const before = await store.getRun(done.runId);
    expect(await reconcileOrphans(store)).toEqual([]);
    expect(await store.getRun(done.runId)).toEqual(before);
  });
});
