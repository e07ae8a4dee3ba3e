// The Runner contract (src/runners/runner.ts), run against every runner in test/support/runner-factories.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runner } from '../../src/runners/runner.js';
import { isTerminal, type RunRecord, type RunStatus, type Store } from '../../src/store/store.js';
import { echoRun, stubbornStep } from '../support/echo-run.js';
import { eventually } from '../support/eventually.js';
import { readRun, runReaches } from '../support/run-records.js';
import { runnerFactories } from '../support/runner-factories.js';

const order: Record<RunStatus, number> = { QUEUED: 0, RUNNING: 1, COMPLETED: 2, FAILED: 2, CANCELED: 2 };

for (const factory of runnerFactories) {
  const unavailable = await factory.unavailable?.();
  describe.skipIf(unavailable !== undefined)(`Runner conformance: ${factory.name} ${unavailable ?? ''}`, () => {
    let temp: { store: Store; remove(): Promise<void> };
    let store: Store;
    const runners: Runner[] = [];
    const create = async (workers: number, stopTimeoutMs?: number): Promise<Runner> => {
      const runner = await factory.create(store, { workers, ...(stopTimeoutMs ? { stopTimeoutMs } : {}) });
      runners.push(runner);
      return runner;
    };
    const run = (runId: string): Promise<RunRecord> => readRun(store, runId);
    const settled = (runId: string): Promise<RunRecord> =>
      eventually(async () => {
        const r = await run(runId);
        return isTerminal(r.status) ? r : undefined;
      });
    const statusIs = (runId: string, status: RunStatus): Promise<RunRecord> => runReaches(store, runId, status);

    beforeEach(async () => {
      temp = await factory.store();
      store = temp.store;
    });
    afterEach(async () => {
      await Promise.all(runners.splice(0).map((r) => r.stop()));
      await temp.remove();
    });

    it('persists a run before any work starts and returns at once', async () => {
      const runner = await create(1);
      // Far longer than any submit: a submit that waited for its run would find it ended.
      const { runId, instanceId } = await runner.submit(echoRun({ delayMs: 20_000 }));
      const record = await run(runId);
      expect(['QUEUED', 'RUNNING']).toContain(record.status);
      expect(record.instanceId).toBe(instanceId);
      expect(instanceId.startsWith(`${runId}@echo-task`)).toBe(true);
      expect(await store.readJournal(instanceId)).toEqual([]);
      expect((await runner.status(runId))?.runId).toBe(runId);
    });

    it('moves QUEUED → RUNNING → COMPLETED, never backwards', async () => {
      const runner = await create(1);
      const first = await runner.submit(echoRun({ delayMs: 300 }));
      const second = await runner.submit(echoRun({ delayMs: 100 }));
      const seen: RunStatus[] = [];
      const final = await eventually(async () => {
        const r = await run(second.runId);
        if (seen.at(-1) !== r.status) seen.push(r.status);
        return isTerminal(r.status) ? r : undefined;
      });
      expect(seen[0]).toBe('QUEUED');
      expect(seen).toContain('RUNNING');
      expect(seen.at(-1)).toBe('COMPLETED');
      for (let i = 1; i < seen.length; i++)
        expect(order[seen[i] as RunStatus]).toBeGreaterThan(order[seen[i - 1] as RunStatus]);
      expect(final.outcome).toBe('passed');
      expect(final.createdAt).toBeLessThanOrEqual(final.startedAt as number);
      expect(final.startedAt).toBeLessThanOrEqual(final.finishedAt as number);
      expect((await settled(first.runId)).status).toBe('COMPLETED');
      expect((await store.readJournal(final.instanceId)).map((e) => e.stepId)).toEqual(['ask']);
    });

    it('cancels a queued run: it never starts, and the running one goes on', async () => {
      const runner = await create(1);
      const running = await runner.submit(echoRun({ delayMs: 400 }));
      const queued = await runner.submit(echoRun({ delayMs: 0 }));
      expect(await runner.cancel(queued.runId)).toBe(true);
      const canceled = await settled(queued.runId);
      expect(canceled.status).toBe('CANCELED');
      expect(canceled.startedAt).toBeNull();
      expect((await settled(running.runId)).status).toBe('COMPLETED');
    });

    it('cancels a running run well before it would finish', async () => {
      const runner = await create(1);
      const { runId, instanceId } = await runner.submit(echoRun({ delayMs: 20_000 }));
      await statusIs(runId, 'RUNNING');
      const started = performance.now();
      expect(await runner.cancel(runId)).toBe(true);
      const record = await settled(runId);
      expect(performance.now() - started).toBeLessThan(5000);
      expect(record.status).toBe('CANCELED');
      expect(record.outcome).toBe('canceled');
      expect(await store.readJournal(instanceId)).toEqual([]);
    });

    it('resolves a cancel racing completion to the real outcome, and keeps it', async () => {
      const runner = await create(4);
      // Cancels land just before, at and just after each run's end; whichever wins, the record agrees with it.
      const offsets = [40, 55, 60, 65, 70, 80, 100, 150];
      const results = await Promise.all(
        offsets.map(async (offset) => {
          const { runId, instanceId } = await runner.submit(echoRun({ delayMs: 60 }));
          await new Promise((resolve) => setTimeout(resolve, offset));
          await runner.cancel(runId);
          return { record: await settled(runId), instanceId };
        }),
      );
      for (const { record, instanceId } of results) {
        expect(['COMPLETED', 'CANCELED']).toContain(record.status);
        const journal = await store.readJournal(instanceId);
        if (record.status === 'COMPLETED') {
          expect(record.outcome).toBe('passed');
          expect(journal.map((e) => e.stepId)).toEqual(['ask']);
        } else expect(record.outcome).toBe('canceled');
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (const { record } of results) expect((await run(record.runId)).status).toBe(record.status);
    });

    it('never overwrites a terminal status', async () => {
      const runner = await create(1);
      const { runId } = await runner.submit(echoRun({ delayMs: 0 }));
      const done = await settled(runId);
      expect(done.status).toBe('COMPLETED');
      expect(await runner.cancel(runId)).toBe(false);
      expect(await store.finishRun(runId, { status: 'FAILED', outcome: 'error' }, Date.now())).toBe(false);
      expect(await store.requestCancel(runId, Date.now())).toBe(false);
      await runner.start();
      expect(await run(runId)).toEqual(done);
    });

    it('executes at most `workers` runs at once, and uses all of them', async () => {
      const runner = await create(2);
      // Runs that do not end by themselves: what is RUNNING stays so, however slowly the runner gets there.
      const submitted = await Promise.all(Array.from({ length: 4 }, () => runner.submit(echoRun({ delayMs: 20_000 }))));
      const statuses = async (): Promise<RunStatus[]> =>
        (await Promise.all(submitted.map((s) => run(s.runId)))).map((r) => r.status);
      const count = (all: RunStatus[], status: RunStatus) => all.filter((s) => s === status).length;
      const full = await eventually(async () => {
        const now = await statuses();
        return count(now, 'RUNNING') === 2 ? now : undefined;
      });
      expect(count(full, 'QUEUED')).toBe(2);
      // A slot freed goes to a waiting run; still two at once, the last one waiting.
      const first = submitted[full.indexOf('RUNNING')] as { runId: string };
      expect(await runner.cancel(first.runId)).toBe(true);
      const refilled = await eventually(async () => {
        const now = await statuses();
        return count(now, 'RUNNING') === 2 && count(now, 'CANCELED') === 1 ? now : undefined;
      });
      expect(count(refilled, 'QUEUED')).toBe(1);
    });

    it('stop() cancels queued and running runs, and a second stop() is harmless', async () => {
      const runner = await create(1);
      const running = await runner.submit(echoRun({ delayMs: 20_000 }));
      const queued = await runner.submit(echoRun({ delayMs: 0 }));
      await statusIs(running.runId, 'RUNNING');
      await runner.stop();
      await runner.stop();
      expect((await run(running.runId)).status).toBe('CANCELED');
      expect((await run(queued.runId)).status).toBe('CANCELED');
      expect(await runner.cancel(running.runId)).toBe(false);
    });

    it('stop() returns within its bound even when a run ignores cancellation', async () => {
      const runner = await create(1, 500);
      const { runId } = await runner.submit(echoRun({ before: [stubbornStep(3)] }));
      await statusIs(runId, 'RUNNING');
      const started = performance.now();
      await Promise.all([runner.stop(), runner.stop()]);
      expect(performance.now() - started).toBeLessThan(2000);
      // The run still records its own end once the step lets go; only then may its store close.
      expect((await settled(runId)).status).toBe('CANCELED');
    });
  });
}
