// Two real processes sharing one SQLite file: runner-host.ts children own runs, this process (and the children
// themselves) reconcile and cancel. No clock is faked: leases and heartbeats are just short.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cancelRun } from '../../src/runners/cancel-run.js';
import { LocalRunner } from '../../src/runners/local.js';
import { isTerminal, type RunRecord, type RunStatus, type Store } from '../../src/store/store.js';
import { eventually } from '../support/eventually.js';
import { readRun, runReaches } from '../support/run-records.js';
import type { HostConfig } from '../support/runner-host.js';
import { type RunnerHost, startRunnerHost } from '../support/runner-host-process.js';
import { openTempStore, type TempStore } from '../support/temp-store.js';

describe('LocalRunner across processes sharing one SQLite store', () => {
  let temp: TempStore;
  let store: Store;
  const hosts: RunnerHost[] = [];
  const runners: LocalRunner[] = [];

  const host = async (runs: HostConfig['runs'], extra: Partial<HostConfig> = {}): Promise<RunnerHost> => {
    const h = await startRunnerHost({ store: temp.file, runs, ...extra });
    hosts.push(h);
    return h;
  };
  const localRunner = (): LocalRunner => {
    const runner = new LocalRunner(store, { workers: 1, heartbeatMs: 100, cancelPollMs: 50 });
    runners.push(runner);
    return runner;
  };
  const run = (runId: string): Promise<RunRecord> => readRun(store, runId);
  const statusIs = (runId: string, status: RunStatus): Promise<RunRecord> => runReaches(store, runId, status);

  beforeEach(async () => {
    temp = await openTempStore();
    store = temp.store;
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await Promise.all(hosts.splice(0).map((h) => h.kill()));
    await temp.remove();
  });

  it("start() spares a live process's RUNNING and QUEUED runs and fails a SIGKILLed one's", async () => {
    const [live, doomed] = await Promise.all([
      host([
        { runId: 'a-running', delayMs: 60_000 },
        { runId: 'a-queued', delayMs: 0 },
      ]),
      host([
        { runId: 'b-running', delayMs: 60_000 },
        { runId: 'b-queued', delayMs: 0 },
      ]),
    ]);
    await statusIs('a-running', 'RUNNING');
    await statusIs('b-running', 'RUNNING');
    expect((await run('a-queued')).owner?.pid).toBe(live.pid);
    await doomed.kill();

    live.send('start');
    await live.next('started');
    expect((await run('a-running')).status).toBe('RUNNING');
    expect((await run('a-queued')).status).toBe('QUEUED');
    for (const runId of ['b-running', 'b-queued']) {
      const orphan = await run(runId);
      expect(orphan.status).toBe('FAILED');
      expect(orphan.error?.message).toBe(`orphaned: its owner ${orphan.owner?.host} pid ${doomed.pid} has exited`);
    }

    // A third process's reconciler (this one) agrees: the live owner's runs are left alone.
    await localRunner().start();
    expect((await run('a-running')).status).toBe('RUNNING');
    expect((await run('a-queued')).status).toBe('QUEUED');
  });

  it("a non-owner's cancel returns false and the run completes; the owner's cancel stops it", async () => {
    const owner = await host(
      [
        { runId: 'finishes', delayMs: 1500 },
        { runId: 'stopped', delayMs: 60_000 },
      ],
      { workers: 2 },
    );
    await statusIs('finishes', 'RUNNING');
    await statusIs('stopped', 'RUNNING');
    const other = localRunner();
    expect(await other.cancel('finishes')).toBe(false);
    expect(await other.cancel('stopped')).toBe(false);
    const finished = await statusIs('finishes', 'COMPLETED');
    expect(finished.outcome).toBe('passed');
    expect((await run('stopped')).status).toBe('RUNNING');

    owner.send('cancel stopped');
    expect((await owner.next('cancel')).result).toBe(true);
    expect((await run('stopped')).status).toBe('CANCELED');
    expect(await owner.next('done')).toEqual({ event: 'done', runs: { finishes: 'COMPLETED', stopped: 'CANCELED' } });
    expect(await owner.exited).toBe(0);
  });

  it('a cancel requested from another process is honoured by the owner on its next poll', async () => {
    const owner = await host([
      { runId: 'target', delayMs: 60_000 },
      { runId: 'waiting', delayMs: 60_000 },
    ]);
    await statusIs('target', 'RUNNING');
    const requested = await cancelRun(localRunner(), store, 'target', { waitMs: 10_000 });
    expect(requested.kind).toBe('requested');
    expect(requested.run.status).toBe('CANCELED');
    // The owner's worker is free again and takes the queued run; a request cancels a QUEUED run just the same.
    await statusIs('waiting', 'RUNNING');
    expect((await cancelRun(localRunner(), store, 'waiting', { waitMs: 10_000 })).run.status).toBe('CANCELED');
    expect(await owner.next('done')).toEqual({ event: 'done', runs: { target: 'CANCELED', waiting: 'CANCELED' } });
  });

  it("keeps another host's run alive while it heartbeats, and fails it once its lease lapses", async () => {
    const remote = await host([{ runId: 'remote', delayMs: 60_000 }], { ownerHost: 'another-machine' });
    const first = await statusIs('remote', 'RUNNING');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const early = new LocalRunner(store, { workers: 1, leaseMs: 800 });
    runners.push(early);
    await early.start();
    expect((await run('remote')).status).toBe('RUNNING');
    expect((await run('remote')).seenAt).toBeGreaterThan(first.seenAt as number);

    await remote.kill();
    const reconciler = new LocalRunner(store, { workers: 1, leaseMs: 800, heartbeatMs: 100 });
    runners.push(reconciler);
    await reconciler.start();
    // Started, it keeps reconciling on its tick: no second start() is needed once the lease runs out.
    const orphan = await eventually(async () => {
      const r = await run('remote');
      return isTerminal(r.status) ? r : undefined;
    });
    expect(orphan.status).toBe('FAILED');
    expect(orphan.error?.message).toBe(
      `orphaned: its owner another-machine pid ${remote.pid} has not been seen within its lease of 800 ms`,
    );
  });
});
