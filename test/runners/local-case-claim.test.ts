// The local runner writes an eval case's claim only once the case has run a while: most cases end sooner, and their
// finish alone records their status and start (one update of the runs row and its indexes less per case).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalRunner, type LocalRunnerOptions } from '../../src/runners/local.js';
import type { Store } from '../../src/store/store.js';
import { echoRun } from '../support/echo-run.js';
import { eventually } from '../support/eventually.js';
import { openTempStore, type TempStore } from '../support/temp-store.js';

describe('LocalRunner: an eval case is claimed once it has run claimAfterMs', () => {
  let temp: TempStore;
  let runner: LocalRunner | undefined;

  beforeEach(async () => {
    temp = await openTempStore();
  });
  afterEach(async () => {
    await runner?.stop();
    await temp.remove();
  });

  const start = (options: Partial<LocalRunnerOptions>): LocalRunner => {
    runner = new LocalRunner(temp.store, { workers: 2, cancelPollMs: 50, ...options });
    return runner;
  };
  const run = async (store: Store, runId: string) => {
    const record = await store.getRun(runId);
    if (!record) throw new Error(`no run ${runId}`);
    return record;
  };

  it('ends a case that finished before its claim was due without a claim, its start recorded by its finish', async () => {
    const runner = start({ claimAfterMs: 60_000 });
    const before = Date.now();
    const [submitted] = await runner.submitMany([echoRun({ runId: 'quick', delayMs: 1_500, evalCase: true })]);
    const runId = submitted?.runId as string;
    // Under way, and still QUEUED: nothing wrote a claim.
    await new Promise((r) => setTimeout(r, 700));
    expect((await run(temp.store, runId)).status).toBe('QUEUED');
    await runner.ended(1, 20_000);
    const done = await run(temp.store, runId);
    expect(done.status).toBe('COMPLETED');
    expect(done.startedAt).toBeGreaterThanOrEqual(before);
    expect(done.finishedAt).toBeGreaterThanOrEqual((done.startedAt as number) + 1_500);
    expect(await temp.store.readResultHeads('conformance', 0, 10)).toHaveLength(1);
  });

  it('claims a case still running after claimAfterMs: RUNNING from its start, which its finish keeps', async () => {
    const runner = start({ claimAfterMs: 300 });
    const before = Date.now();
    const [submitted] = await runner.submitMany([echoRun({ runId: 'slow', delayMs: 4_000, evalCase: true })]);
    // submitMany starts the case before it returns: its start is no later than this, its claim 300 ms after it.
    const submittedBy = Date.now();
    const runId = submitted?.runId as string;
    const running = await eventually(async () => {
      const r = await run(temp.store, runId);
      return r.status === 'RUNNING' ? r : undefined;
    }, 4_000);
    expect(running.startedAt).toBeGreaterThanOrEqual(before);
    expect(running.startedAt).toBeLessThanOrEqual(submittedBy);
    await runner.ended(1, 20_000);
    const done = await run(temp.store, runId);
    expect(done.status).toBe('COMPLETED');
    expect(done.startedAt).toBe(running.startedAt);
  });

  // The case's model call outlasts the test: only its refused claim can end it in time.
  it('stops a case whose claim is refused (ended elsewhere before it was due) and commits nothing of it', {
    timeout: 30_000,
  }, async () => {
    const runner = start({ claimAfterMs: 300 });
    const other = await temp.open();
    const [submitted] = await runner.submitMany([echoRun({ runId: 'taken', delayMs: 600_000, evalCase: true })]);
    const runId = submitted?.runId as string;
    expect(await other.finishRun(runId, { status: 'CANCELED', outcome: 'canceled' }, Date.now())).toBe(true);
    await runner.ended(1, 600_000);
    const done = await run(temp.store, runId);
    expect(done.status).toBe('CANCELED');
    expect(done.startedAt).toBeNull();
    expect(await temp.store.readResultHeads('conformance', 0, 10)).toEqual([]);
  });
});
