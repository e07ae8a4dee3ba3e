import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JournalEntry, RunOwner, Store } from '../../src/store/store.js';
import { newRun } from '../support/run-records.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const owner: RunOwner = { host: 'h', pid: 1, startedAt: 1000 };
const entry = (instanceId: string, seq: number): JournalEntry => ({
  instanceId,
  seq,
  stepId: `s${seq}`,
  attempt: 1,
  ops: [{ op: 'set', path: `outputs.s${seq}`, value: { text: 'ünïcödé', n: seq } }],
  output: { nested: { keep_snake: true } },
  createdAt: 1_700_000_000_000 + seq,
});

for (const backend of await storeBackends()) {
  describe.skipIf(backend.unavailable)(`store contract (${backend.name})`, () => {
    if (backend.unavailable) it.skip(backend.unavailable, () => {});
    let temp: BackendStore;
    let store: Store;
    beforeEach(async () => {
      temp = await backend.create();
      store = temp.store;
    });
    afterEach(() => temp.remove());

    it('walks a run QUEUED → RUNNING → terminal and never overwrites the terminal status', async () => {
      await store.createRuns([
        { ...newRun('r1'), target: 'model', caseKey: 'k1', metadata: { identity: { test: 'a' } } },
      ]);
      expect((await store.getRun('r1'))?.status).toBe('QUEUED');
      expect(await store.claimRun('r1', owner, 5_000_000_000_000)).toBe(true);
      expect(await store.claimRun('r1', owner, 5_000_000_000_001)).toBe(false);
      expect(
        await store.finishRun('r1', { status: 'COMPLETED', outcome: 'passed', score: 0.75 }, 5_000_000_000_002),
      ).toBe(true);
      expect(
        await store.finishRun(
          'r1',
          { status: 'FAILED', outcome: 'error', error: { kind: 'internal', message: 'late', retryable: false } },
          5_000_000_000_003,
        ),
      ).toBe(false);
      const run = await store.getRun('r1');
      expect(run).toMatchObject({
        status: 'COMPLETED',
        outcome: 'passed',
        score: 0.75,
        error: null,
        target: 'model',
        caseKey: 'k1',
        metadata: { identity: { test: 'a' } },
        owner,
        // Epoch milliseconds beyond 2^31 come back as numbers on both backends.
        startedAt: 5_000_000_000_000,
        finishedAt: 5_000_000_000_002,
      });
    });

    it('refuses a second completion of the same journal position and replays entries in order', async () => {
      await store.createRuns([newRun('r1')]);
      expect(await store.appendJournal(entry('t@r1', 1))).toBe(true);
      expect(await store.appendJournal(entry('t@r1', 2))).toBe(true);
      expect(await store.appendJournal({ ...entry('t@r1', 2), stepId: 'stale' })).toBe(false);
      expect(await store.appendJournal(entry('t@r1', 3))).toBe(true);
      expect(await store.appendJournal(entry('t@r1', 4))).toBe(true);
      const journal = await store.readJournal('t@r1');
      expect(journal.map((e) => [e.seq, e.stepId])).toEqual([
        [1, 's1'],
        [2, 's2'],
        [3, 's3'],
        [4, 's4'],
      ]);
      expect(journal[0]).toEqual(entry('t@r1', 1));
    });

    it('counts a group by target, status and outcome, and lists runs newest first', async () => {
      await store.createRuns([
        { ...newRun('a1'), target: 'a' },
        { ...newRun('a2'), target: 'a' },
        { ...newRun('b1'), target: 'b' },
      ]);
      await store.claimRun('a1', owner, Date.now());
      await store.finishRun('a1', { status: 'COMPLETED', outcome: 'failed', score: 0 }, Date.now());
      const rows = (await store.groupProgress('g')).map((r) => `${r.target}:${r.status}:${r.outcome}:${r.count}`);
      expect(rows.sort()).toEqual(['a:COMPLETED:failed:1', 'a:QUEUED:null:1', 'b:QUEUED:null:1']);
      expect((await store.listRuns({ status: 'QUEUED' })).map((r) => r.runId).sort()).toEqual(['a2', 'b1']);
    });

    it('stores an instance with its spec, context and start step', async () => {
      await store.createRuns([
        { ...newRun('r1'), spec: { id: 't', steps: [{ id: 's1' }] }, context: { vars: { x: 1 } }, startStep: 's2' },
      ]);
      expect(await store.getInstance('t@r1')).toMatchObject({
        taskId: 't',
        spec: { id: 't', steps: [{ id: 's1' }] },
        context: { vars: { x: 1 } },
        startStep: 's2',
      });
    });

    it('creates a submission of several chunks and of chunks of different sizes, each run with its own fields', async () => {
      const run = (i: number) => ({
        ...newRun(`r${i}`, i % 2 ? owner : undefined),
        target: `m${i % 3}`,
        caseKey: `k${i}`,
        metadata: { i },
        spec: { id: `t${i}` },
        context: { vars: { i } },
        ...(i % 5 ? {} : { startStep: 's2' }),
      });
      // Two full chunks and a shorter one, then a shorter one alone: each size is its own statement.
      await store.createRuns(Array.from({ length: 85 }, (_, i) => run(i)));
      await store.createRuns([run(85), run(86)]);
      await expect(store.createRuns([run(87), run(3)])).rejects.toThrow();
      const runs = await store.listRuns({ groupId: 'g' });
      expect(runs).toHaveLength(87);
      for (const i of [0, 39, 40, 84, 85, 86])
        expect(runs.find((r) => r.runId === `r${i}`)).toMatchObject({
          status: 'QUEUED',
          target: `m${i % 3}`,
          caseKey: `k${i}`,
          metadata: { i },
          owner: i % 2 ? owner : null,
        });
      expect(await store.getInstance('t@r84')).toMatchObject({ spec: { id: 't84' }, context: { vars: { i: 84 } } });
      expect((await store.getInstance('t@r85'))?.startStep).toBe('s2');
      expect((await store.getInstance('t@r86'))?.startStep).toBeNull();
    });

    it('lets exactly one of two connections claim a run', async () => {
      const second = await temp.open();
      await store.createRuns([newRun('r1')]);
      const claims = await Promise.all([store.claimRun('r1', owner, 1), second.claimRun('r1', owner, 2)]);
      expect(claims.filter(Boolean)).toHaveLength(1);
    });

    it('prunes the step state of runs finished before a cutoff, and keeps their rows', async () => {
      await store.createRuns([newRun('r1'), newRun('r2'), newRun('r3'), newRun('r4')]);
      for (const runId of ['r1', 'r2', 'r3', 'r4']) await store.appendJournal(entry(`t@${runId}`, 1));
      await store.appendJournal(entry('t@r1', 2));
      await store.finishRun('r1', { status: 'COMPLETED', outcome: 'passed' }, 1_000);
      await store.finishRun('r2', { status: 'FAILED', outcome: 'error' }, 1_500);
      await store.claimRun('r3', owner, 1_000);
      // r3 is still running however old; r4 finished after the cutoff.
      await store.finishRun('r4', { status: 'COMPLETED', outcome: 'passed' }, 5_000);
      expect(await store.pruneFinished(2_000)).toEqual({ runs: 2, journalEntries: 3 });
      for (const gone of ['t@r1', 't@r2']) {
        expect(await store.getInstance(gone)).toBeUndefined();
        expect(await store.readJournal(gone)).toEqual([]);
      }
      for (const kept of ['t@r3', 't@r4']) {
        expect(await store.getInstance(kept)).toBeDefined();
        expect(await store.readJournal(kept)).toHaveLength(1);
      }
      expect((await store.getRun('r1'))?.outcome).toBe('passed');
      expect(await store.pruneFinished(2_000)).toEqual({ runs: 0, journalEntries: 0 });
      const bytes = await store.sizeBytes();
      expect(bytes).toBeGreaterThan(0);
      await store.compact();
      expect(await store.sizeBytes()).toBeLessThanOrEqual(bytes);
    });

    it('commits a case result with its terminal status only, and reads results in commit order', async () => {
      const result = (caseKey: string, outcome: string) => ({
        caseKey,
        attempt: 1,
        target: 'model',
        evalPath: 'evals/a.eval.yaml',
        row: { key: caseKey, outcome, score: 1, group_id: 'g', error: null },
        files: { 'result.json': `{"output":"ünïcödé ${caseKey}"}` },
      });
      await store.createRuns([newRun('r1'), newRun('r2'), newRun('r3')]);
      expect(
        await store.finishRun('r2', { status: 'COMPLETED', outcome: 'passed', result: result('k2', 'passed') }, 5),
      ).toBe(true);
      expect(
        await store.finishRun('r1', { status: 'COMPLETED', outcome: 'failed', result: result('k1', 'failed') }, 6),
      ).toBe(true);
      // Already terminal: neither the status nor a second result is committed.
      expect(
        await store.finishRun('r1', { status: 'COMPLETED', outcome: 'passed', result: result('k1', 'passed') }, 7),
      ).toBe(false);
      const all = await store.readResults('g', 0, 10);
      expect(all.map((r) => [r.runId, r.caseKey, r.row.outcome])).toEqual([
        ['r2', 'k2', 'passed'],
        ['r1', 'k1', 'failed'],
      ]);
      expect(all[1]?.files['result.json']).toBe('{"output":"ünïcödé k1"}');
      expect(all[0]?.committedAt).toBe(5);
      const after = await store.readResults('g', all[0]?.seq ?? 0, 10);
      expect(after.map((r) => r.runId)).toEqual(['r1']);
      expect(await store.readResults('other', 0, 10)).toEqual([]);
    });

    it('reads result heads and texts, and hands a watcher the results it commits, never a refused one', async () => {
      const result = (caseKey: string, outcome: string) => ({
        caseKey,
        attempt: 2,
        target: 'model',
        evalPath: 'a.eval.yaml',
        row: { key: caseKey, outcome, score: 1, group_id: 'g', error: null, note: 'ünï "q"' },
        files: { 'result.json': `{"output":"ünïcödé ${caseKey}"}`, 'w.diff': '+a\n' },
      });
      await store.createRuns([newRun('r1'), newRun('r2'), newRun('r3'), newRun('r4')]);
      const watch = store.watchResults('g');
      const other = store.watchResults('other');
      const done = { status: 'COMPLETED', outcome: 'passed' } as const;
      expect(await store.finishRun('r2', { ...done, result: result('k2', 'passed') }, 5)).toBe(true);
      expect(await store.finishRun('r1', { ...done, result: result('k1', 'failed') }, 6)).toBe(true);
      // Refused (already terminal): nothing of it is held, the committed one stays.
      expect(await store.finishRun('r1', { ...done, result: result('k1', 'passed') }, 7)).toBe(false);
      // Failed (a result the database refuses: no case key): nothing committed, nothing held.
      await expect(
        store.finishRun('r3', { ...done, result: result(null as unknown as string, 'passed') }, 8),
      ).rejects.toThrow();
      expect((await store.getRun('r3'))?.status).toBe('QUEUED');
      const heads = await store.readResultHeads('g', 0, 10);
      expect(heads.map((h) => h.runId)).toEqual(['r2', 'r1']);
      expect((await store.readResultHeads('g', heads[0]?.seq ?? 0, 10)).map((h) => h.runId)).toEqual(['r1']);
      const texts = await store.readResultTexts(heads.map((h) => h.seq).reverse());
      expect(texts.map((t) => t.runId)).toEqual(['r2', 'r1']);
      const stored = await store.readResults('g', 0, 10);
      for (const [i, t] of texts.entries()) {
        // The row's text is the row as stored, the same text a bundle's index line carries.
        expect(JSON.parse(t.row)).toEqual(stored[i]?.row);
        expect(t).toMatchObject({ caseKey: stored[i]?.caseKey, attempt: 2, files: stored[i]?.files });
        expect(watch.take(t.runId)).toEqual(t);
        expect(watch.take(t.runId)).toBeUndefined();
      }
      expect(watch.take('r3')).toBeUndefined();
      expect(other.take('r2')).toBeUndefined();
      // Closed: what commits afterwards is not held.
      watch.close();
      expect(await store.finishRun('r4', { ...done, result: result('k4', 'passed') }, 9)).toBe(true);
      expect(store.watchResults('g').take('r4')).toBeUndefined();
      expect(await store.readResultTexts([])).toEqual([]);
    });
  });
}
