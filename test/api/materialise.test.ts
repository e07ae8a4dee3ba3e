import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Materialiser } from '../../src/api/materialise.js';
import { readResultText } from '../../src/bundle/case-files.js';
import { withResultAt } from '../../src/bundle/result-pack.js';
import type { CaseResultRecord, Store } from '../../src/store/store.js';
import { newRun } from '../support/run-records.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';
import { openTempStore, type TempStore } from '../support/temp-store.js';

const result = (runId: string): CaseResultRecord => ({
  caseKey: `k-${runId}`,
  attempt: 1,
  target: 'model',
  evalPath: 'a.eval.yaml',
  row: { run_id: runId, group_id: 'g', key: `k-${runId}`, outcome: 'passed', score: 1, error: null, text: 'ü "q"\n' },
  files: { 'result.json': `{"output":"ünï ${runId}\\n"}`, ...(runId === 'r2' ? { 'ws.diff': '+x\n' } : {}) },
});

const finish = (store: Store, runId: string, now: number) =>
  store.finishRun(runId, { status: 'COMPLETED', outcome: 'passed', result: result(runId) }, now);

/** Every file of a bundle by its path, with its bytes. */
const filesOf = (dir: string): Record<string, string> =>
  Object.fromEntries(
    (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
      .filter((e) => e.isFile())
      .map((e) => {
        const file = join(e.parentPath, e.name);
        return [file.slice(dir.length), readFileSync(file, 'utf8')];
      }),
  );

const materialise = async (
  store: Store,
  dir: string,
  fresh: boolean,
  watch?: () => Promise<void>,
  appended: string[] = [],
) => {
  const m = new Materialiser(store, 'g', dir, fresh, (lines) => appended.push(...lines));
  try {
    await watch?.();
    return await m.complete();
  } finally {
    m.close();
  }
};

for (const backend of await storeBackends()) {
  describe.skipIf(backend.unavailable)(`materialise (${backend.name})`, () => {
    let temp: BackendStore;
    let dir: string;
    beforeEach(async () => {
      temp = await backend.create();
      dir = mkdtempSync(join(tmpdir(), 'proctor-materialise-'));
    });
    afterEach(async () => {
      await temp.remove();
      rmSync(dir, { recursive: true, force: true });
    });

    it("writes its own commits and another process's in commit order, the same bytes a pull writes, once", async () => {
      const own = temp.store;
      const other = await temp.open();
      await own.createRuns(['r1', 'r2', 'r3', 'r4'].map((id) => newRun(id)));
      const ran = join(dir, 'ran');
      const appended: string[] = [];
      // The running command's materialiser watches from before the first commit, as run-eval's does.
      expect(
        await materialise(
          own,
          ran,
          true,
          async () => {
            await finish(own, 'r1', 1);
            await finish(own, 'r2', 2);
            await finish(other, 'r3', 3);
            await finish(own, 'r4', 4);
          },
          appended,
        ),
      ).toBe(4);
      const lines = readFileSync(join(ran, 'index.jsonl'), 'utf8').split('\n');
      expect(lines.map((l) => l && (JSON.parse(l) as { run_id: string }).run_id)).toEqual(['r1', 'r2', 'r3', 'r4', '']);
      // What a fold visits instead of reading the index back: its lines as written, packed results' places included.
      expect([...appended, '']).toEqual(lines);
      expect(appended.some((l) => l.includes('"result_at":'))).toBe(true);
      // `results pull` elsewhere: every result from the store, byte for byte the same bundle.
      const pulled = join(dir, 'pulled');
      expect(await materialise(other, pulled, false)).toBe(4);
      expect(filesOf(pulled)).toEqual(filesOf(ran));
      expect(filesOf(ran)['/cases/k-r2/1/ws.diff']).toBe('+x\n');
      // Pulled again into either: nothing twice.
      expect(await materialise(other, ran, false)).toBe(0);
      expect(await materialise(own, pulled, false)).toBe(0);
      expect(filesOf(pulled)).toEqual(filesOf(ran));
    });
  });
}

describe('materialise (sqlite)', () => {
  let temp: TempStore;
  beforeEach(async () => {
    temp = await openTempStore();
  });
  afterEach(() => temp.remove());

  it('writes a result this process committed from the text it committed, without reading it back', async () => {
    const store = temp.store;
    await store.createRuns([newRun('r1'), newRun('r2')]);
    const bundle = join(temp.dir, 'bundle');
    const m = new Materialiser(store, 'g', bundle, true);
    try {
      await finish(store, 'r1', 1);
      const other = await temp.open();
      await finish(other, 'r2', 2);
      // Rewritten behind the store's back: a read would see the new texts, the held copy is what committed.
      const db = new Database(temp.file);
      db.prepare(`update results set row = '{"rewritten":true}', files = '{"result.json":"{}"}'`).run();
      db.close();
      expect(await m.pull()).toBe(2);
    } finally {
      m.close();
    }
    const [mine, theirs] = readFileSync(join(bundle, 'index.jsonl'), 'utf8').split('\n');
    // The row is the committed text with its result's place in the pack spliced in, never stringified again.
    const text = '{"output":"ünï r1\\n"}';
    expect(mine).toBe(withResultAt(JSON.stringify(result('r1').row), [0, Buffer.byteLength(text)]));
    expect(readResultText(bundle, JSON.parse(mine as string))).toBe(text);
    // Another process's result is read from the store.
    expect(theirs).toBe(`{"rewritten":true,"result_at":[${Buffer.byteLength(text) + 1},2]}`);
    expect(readResultText(bundle, JSON.parse(theirs as string))).toBe('{}');
  });
});
