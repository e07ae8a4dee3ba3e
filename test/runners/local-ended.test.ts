// A submitter refilling its window waits on the runner's word that runs ended, not on a timer's guess: a guess
// made long by a dry spell (few ended because the runner had nothing left to run) left the runner idle.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalRunner } from '../../src/runners/local.js';
import { echoRun } from '../support/echo-run.js';
import { openTempStore, type TempStore } from '../support/temp-store.js';

describe('LocalRunner.ended', () => {
  let temp: TempStore;
  let runner: LocalRunner;

  beforeEach(async () => {
    temp = await openTempStore();
    runner = new LocalRunner(temp.store, { workers: 2 });
  });
  afterEach(async () => {
    await runner.stop();
    await temp.remove();
  });

  const ended = (n: number, ms = 60_000): { done: () => boolean; wait: Promise<void> } => {
    let done = false;
    const wait = runner.ended(n, ms).then(() => {
      done = true;
    });
    return { done: () => done, wait };
  };

  it('resolves once that many more runs have ended, each counted once its end is committed', async () => {
    const two = ended(2);
    const [first] = await runner.submitMany([echoRun({ delayMs: 50 })]);
    const three = ended(3);
    await runner.submitMany([echoRun({ delayMs: 50 }), echoRun({ delayMs: 2_000 })]);
    await two.wait;
    // The two short runs have ended, and the store says so; the long one still runs, so three have not.
    expect((await temp.store.getRun(first?.runId as string))?.status).toBe('COMPLETED');
    expect(three.done()).toBe(false);
    await three.wait;
  });

  it('counts a queued run canceled before it started', async () => {
    const [, , queued] = await runner.submitMany([
      echoRun({ delayMs: 2_000 }),
      echoRun({ delayMs: 2_000 }),
      echoRun({ delayMs: 50 }),
    ]);
    const one = ended(1);
    expect(await runner.cancel(queued?.runId as string)).toBe(true);
    await one.wait;
    expect((await temp.store.getRun(queued?.runId as string))?.status).toBe('CANCELED');
  });

  it('wakes every waiter when it stops, and after its time at the latest', async () => {
    const late = ended(1, 50);
    await late.wait;
    const never = ended(5);
    await runner.submitMany([echoRun({ delayMs: 5_000 })]);
    await runner.stop();
    await never.wait;
    expect(await runner.ended(1, 60_000)).toBeUndefined();
  });
});
