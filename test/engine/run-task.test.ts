import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { replay } from '../../src/engine/context.js';
import type { RollbackOutput, TaskRunResult } from '../../src/engine/run-task.js';
import type { RunRequest } from '../../src/engine/task.js';
import type { JsonObject } from '../../src/records.js';
import type { JournalEntry } from '../../src/store/store.js';
import { engineHarness } from './harness.js';

const engine = engineHarness();
const { logLines, step, request, run } = engine;

const statuses = (result: TaskRunResult): Record<string, string> =>
  Object.fromEntries(result.steps.map((s) => [s.stepId, s.status]));

/** Another writer's completion of `a` at position 1 of the request's journal, already in the store. */
const takenFirst = async (req: RunRequest): Promise<JournalEntry> => {
  const theirs: JournalEntry = {
    instanceId: req.instanceId,
    seq: 1,
    stepId: 'a',
    attempt: 1,
    ops: [{ op: 'set', path: 'winner', value: 'other' }],
    output: null,
    createdAt: Date.now(),
  };
  expect(await engine.store.appendJournal(theirs)).toBe(true);
  return theirs;
};

const replayed = async (req: RunRequest): Promise<JsonObject> =>
  replay(req.context, await engine.store.readJournal(req.instanceId));

describe('runTask: the DAG', () => {
  it('runs a step without depends_on after every earlier one, and steps with depends_on side by side', async () => {
    // b can only end once c has ended: it passes only if b and c run at the same time.
    const req = request([
      step('a'),
      step('b', { waitFor: 'end:c' }, { dependsOn: ['a'] }),
      step('c', {}, { dependsOn: ['a'] }),
      step('d'),
    ]);
    const result = await run(req);
    expect(result.status).toBe('COMPLETED');
    const lines = logLines();
    const at = (line: string) => lines.indexOf(line);
    expect(at('end:a')).toBeLessThan(at('start:b'));
    expect(at('end:a')).toBeLessThan(at('start:c'));
    expect(at('start:b')).toBeLessThan(at('end:c'));
    expect(at('start:d')).toBeGreaterThan(Math.max(at('end:b'), at('end:c')));
  });

  it('journals every completion with its context change, so replaying the journal gives the final context', async () => {
    const req = request([step('a', { set: { 'made.a': 1 } }), step('b', { set: { 'made.b': { x: [1, 2] } } })]);
    const result = await run(req);
    expect(result.context).toMatchObject({ made: { a: 1, b: { x: [1, 2] } } });
    expect(await replayed(req)).toEqual(result.context);
    // Each step saw exactly what the ones before it made.
    expect(result.steps.find((s) => s.stepId === 'b')?.output).toEqual({ seen: { made: { a: 1 } } });
  });

  it('journals no completion that makes no resource when its result records the run, and every one otherwise', async () => {
    const req = request([
      step('a', { set: { 'made.a': 1 } }),
      step('b', { set: { 'made.b': 2 } }, { dependsOn: [] }),
      step('c', { set: { 'made.c': 3 } }, { dependsOn: ['a', 'b'] }),
    ]);
    const result = await run(req, undefined, undefined, { recordedByResult: true });
    expect(result.status).toBe('COMPLETED');
    expect(await engine.store.readJournal(req.instanceId)).toEqual([]);
    // The result records each step, and the context holds what each made.
    expect(result.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'completed'],
    ]);
    expect(result.context).toMatchObject({ made: { a: 1, b: 2, c: 3 } });
    // Without it, every completion is written before the run returns.
    const plain = request([step('a', { set: { 'made.a': 1 } })]);
    await run(plain);
    expect(await engine.store.readJournal(plain.instanceId)).toHaveLength(1);
  });

  it('journals a completion that makes or drops a resource, at the next position', async () => {
    const req = request([
      step('a', { set: { 'made.a': 1 } }),
      { id: 'ws', type: 'workspace', config: {} },
      { id: 'down', type: 'teardown', config: {} },
      step('b', { set: { 'made.b': 2 } }),
    ]);
    const result = await run(req, undefined, undefined, { recordedByResult: true });
    expect(result.status).toBe('COMPLETED');
    const written = await engine.store.readJournal(req.instanceId);
    expect(written.map((e) => [e.seq, e.stepId])).toEqual([
      [1, 'ws'],
      [2, 'down'],
    ]);
    expect(written[0]?.ops.map((op) => op.path)).toContain('resources.ws');
    // What the journal replays to holds the resources as the run left them: what a teardown after a crash reads.
    expect(replay(req.context, written).resources).toEqual(result.context.resources);
  });

  it('journals a rollback, which the result does not record, and not the steps run again', async () => {
    const req = request([
      step('a', { set: { 'made.a': 1 } }),
      step('check', { failVerdictTimes: 1, set: { 'made.check': true } }, { retry: { from: 'a', max: 1 } }),
    ]);
    const result = await run(req, undefined, undefined, { recordedByResult: true });
    expect(result.status).toBe('COMPLETED');
    const written = await engine.store.readJournal(req.instanceId);
    expect(written.map((e) => [e.seq, e.stepId])).toEqual([[1, 'check']]);
    expect(written[0]?.output).toMatchObject({ rollback: { from: 'a', to: 'check' } });
    expect(result.context).toMatchObject({ made: { a: 1, check: true } });
  });
});

describe('runTask: a failing step', () => {
  it('fails the task by default: nothing after it starts, and the error is recorded', async () => {
    const req = request([step('a'), step('b', { failTimes: 1 }), step('c')]);
    const result = await run(req);
    expect(result.status).toBe('FAILED');
    expect(result.error).toMatchObject({ kind: 'setup_failed', message: expect.stringContaining('planned failure') });
    expect(statuses(result)).toEqual({ a: 'completed', b: 'failed', c: 'skipped' });
    expect(logLines()).not.toContain('start:c');
  });

  it('with fail_task_on_error false, lets the task go on and complete', async () => {
    const req = request([step('a'), step('b', { failTimes: 1 }, { failTaskOnError: false }), step('c')]);
    const result = await run(req);
    expect(result.status).toBe('COMPLETED');
    expect(result.error).toBeNull();
    expect(statuses(result)).toEqual({ a: 'completed', b: 'failed', c: 'completed' });
    expect(result.steps.find((s) => s.stepId === 'b')?.error).toMatchObject({ kind: 'setup_failed' });
  });
});

describe('runTask: retry {from, max}', () => {
  it('rolls the context back to before `from`, journals the undo, and re-runs the span', async () => {
    const req = request(
      [
        step('base', { set: { base: true } }),
        step('a', { set: { 'made.a': 1, base: 'changed' } }),
        step('b', { set: { 'made.b': 2 }, failTimes: 1 }, { retry: { from: 'a', max: 2 } }),
      ],
      { context: { given: 'x' } },
    );
    const result = await run(req);
    expect(result.status).toBe('COMPLETED');
    expect(logLines().filter((l) => l === 'start:a')).toHaveLength(2);
    expect(logLines().filter((l) => l === 'start:base')).toHaveLength(1);
    const journal = await engine.store.readJournal(req.instanceId);
    const rollback = journal.find((e) => (e.output as Partial<RollbackOutput> | null)?.rollback !== undefined);
    expect(rollback?.output).toEqual({ rollback: { from: 'a', to: 'b', span: ['a', 'b'], retry: 1 } });
    // The re-run of `a` saw the context exactly as the first run did: as of `from`, nothing of the span left.
    const seen = journal.filter((e) => e.stepId === 'a' && e !== rollback).map((e) => e.output);
    expect(seen).toEqual([{ seen: { given: 'x', base: true } }, { seen: { given: 'x', base: true } }]);
    expect(result.context).toEqual({ given: 'x', base: 'changed', made: { a: 1, b: 2 } });
    expect(await replayed(req)).toEqual(result.context);
  });

  it('keeps what a step beside the span wrote, even under an object the span created', async () => {
    // `side` depends on nothing and completes between `a` and the failure of `b`: it is not in the span.
    const req = request([
      step('a', { set: { 'made.a': 1 } }),
      step('side', { set: { 'made.side': 'kept' }, waitFor: 'end:a' }, { dependsOn: [] }),
      step('b', { set: { 'made.b': 2 }, waitFor: 'end:side', failTimes: 1 }, { retry: { from: 'a', max: 1 } }),
    ]);
    const result = await run(req);
    expect(result.status).toBe('COMPLETED');
    expect(logLines().filter((l) => l === 'start:side')).toHaveLength(1);
    const journal = await engine.store.readJournal(req.instanceId);
    const reruns = journal.filter((e) => e.stepId === 'a').map((e) => e.output);
    expect(reruns.at(-1)).toEqual({ seen: { made: { side: 'kept' } } });
    expect(result.context).toEqual({ made: { a: 1, side: 'kept', b: 2 } });
    expect(await replayed(req)).toEqual(result.context);
  });

  it('re-runs a span whose verification did not pass, at most `max` times', async () => {
    const req = request([
      step('a', { set: { 'made.a': 1 } }),
      step('check', { failVerdictTimes: 5 }, { retry: { from: 'a', max: 2 } }),
    ]);
    const result = await run(req);
    // Three verdicts (the first and two retries), all below par: the task completes, judged.
    expect(logLines().filter((l) => l === 'start:check')).toHaveLength(3);
    expect(result.status).toBe('COMPLETED');
    expect(await replayed(req)).toEqual(result.context);
  });
});

describe('runTask: the task timeout_s', () => {
  it('bounds every step, not only a prompt: a hanging step ends the task as a timeout', async () => {
    const req = request([step('a'), step('stuck', { hang: true }), step('after')]);
    req.task.timeoutS = 0.3;
    const result = await run(req);
    expect(result.status).toBe('FAILED');
    expect(result.error).toMatchObject({
      kind: 'timeout',
      message: 'step "stuck": the task exceeded its timeout_s (0.3s)',
    });
    expect(statuses(result)).toEqual({ a: 'completed', stuck: 'failed', after: 'skipped' });
  });

  it('starts again for each retry of a retryable error, so every attempt gets the full limit', async () => {
    const req = request([step('stuck', { hang: true })], { retries: 1 });
    req.task.timeoutS = 0.3;
    const result = await run(req);
    expect(result.error).toMatchObject({ kind: 'timeout' });
    expect(result.steps[0]?.attempts).toBe(2);
    expect(logLines().filter((l) => l === 'start:stuck')).toHaveLength(2);
  });
});

describe('runTask: resuming', () => {
  it('from a step: earlier steps are seeded, not run, and the given context is where it starts', async () => {
    const saved = { made: { a: 1 } };
    const req = request([step('a'), step('b'), step('c', { set: { 'made.c': 3 } })], {
      context: saved,
      startStep: 'c',
    });
    const result = await run(req);
    expect(result.status).toBe('COMPLETED');
    expect(logLines()).toEqual(['start:c', 'end:c']);
    expect(statuses(result)).toEqual({ a: 'seeded', b: 'seeded', c: 'completed' });
    expect(result.steps.find((s) => s.stepId === 'c')?.output).toEqual({ seen: saved });
    expect(await replayed(req)).toEqual({ made: { a: 1, c: 3 } });
  });

  it('refuses a stale completion: a journal position another writer holds is never overwritten', async () => {
    const req = request([step('a', { set: { 'made.a': 1 } })]);
    // Both writers in the same millisecond, as on a fast machine: only the entry itself may count as its own.
    const now = vi.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000);
    onTestFinished(() => now.mockRestore());
    const theirs = await takenFirst(req);
    // This process believes the journal empty (journalLength 0): its completion of `a` takes position 1.
    const result = await run(req);
    expect(result.status).toBe('FAILED');
    expect(result.error).toMatchObject({ kind: 'internal', message: expect.stringContaining('stale completion') });
    expect(await engine.store.readJournal(req.instanceId)).toEqual([theirs]);
  });

  it("refuses an eval case's resource completion at a position another writer took: its view is stale", async () => {
    const req = request([step('a', { set: { 'made.a': 1 } }), { id: 'ws', type: 'workspace', config: {} }]);
    const theirs = await takenFirst(req);
    // a's completion is not journaled; ws's goes to position 1, which is taken.
    const result = await run(req, undefined, undefined, { recordedByResult: true });
    expect(result.error).toMatchObject({ kind: 'internal', message: expect.stringContaining('stale completion') });
    expect(await engine.store.readJournal(req.instanceId)).toEqual([theirs]);
  });
});
