import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filesColumn, parseFilesColumn } from '../../src/store/files-column.js';
import type { CaseResultRecord, Store } from '../../src/store/store.js';
import { newRun } from '../support/run-records.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

// A result.json as recordCase writes it, with what JSON and SQL readers could get wrong: quotes, backslashes, line
// breaks in strings, non-ASCII, integer-like keys (JavaScript lists them first), exponents, a JSON text as a value.
const result = JSON.stringify({
  identity: { eval: 'a "quoted" eval.yaml', test: 't\\1', prompt: 'p1', target: 'm', sample: 0 },
  outcome: 'passed',
  score: 0.1 + 0.2,
  output: 'line one\nline two\t"tab" — naïve',
  steps: [{ stepId: 'prompt', output: { 10: 'ten', 2: 'two', big: 1e21, small: 5e-7, json: '{"a":[1,2]}' } }],
});
// Written as strings: a result cut at the cap, and one holding escapes PostgreSQL's json refuses.
const cut = `${result.slice(0, 40)}\n[proctor: truncated: ${result.length} bytes, the first 40 kept]\n`;
const surrogate = JSON.stringify({ outcome: 'passed', output: 'half \ud83d of a pair, and \u0000' });

describe('the files column', () => {
  it('writes a compact result.json as its JSON value, and every other file as a string', () => {
    const files = { 'prompt.diff': '+a "b"\n', 'result.json': result };
    const column = filesColumn(files);
    expect(column).toBe(`{"prompt.diff":${JSON.stringify(files['prompt.diff'])},"result.json":${result}}`);
    expect(parseFilesColumn(column)).toEqual(files);
    for (const text of [cut, surrogate, JSON.stringify(JSON.parse(result), null, 2), '[1,2]', 'plain']) {
      expect(filesColumn({ 'result.json': text })).toBe(JSON.stringify({ 'result.json': text }));
      expect(parseFilesColumn(filesColumn({ 'result.json': text }))).toEqual({ 'result.json': text });
    }
    expect(filesColumn({})).toBe('{}');
    expect(parseFilesColumn('{}')).toEqual({});
  });
});

/** The column as the database holds it, read over a connection of its own. */
const storedColumn = async (url: string, runId: string): Promise<string> => {
  if (url.startsWith('sqlite:')) {
    const db = new BetterSqlite3(url.slice('sqlite:'.length), { readonly: true });
    try {
      return (db.prepare('select files from results where run_id = ?').get(runId) as { files: string }).files;
    } finally {
      db.close();
    }
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('select files from results where run_id = $1', [runId])).rows[0].files as string;
  } finally {
    await client.end();
  }
};

/** Ends the run with a result of these files, as an eval case's finish does. */
const commit = (store: Store, runId: string, files: Record<string, string>): Promise<boolean> => {
  const result: CaseResultRecord = {
    caseKey: `k-${runId}`,
    attempt: 1,
    target: 'm',
    evalPath: 'a.eval.yaml',
    row: { key: `k-${runId}`, outcome: 'passed', score: 1, group_id: 'g', error: null },
    files,
  };
  return store.finishRun(runId, { status: 'COMPLETED', outcome: 'passed', result }, 5);
};

for (const backend of await storeBackends()) {
  describe.skipIf(backend.unavailable)(`result files in the store (${backend.name})`, () => {
    let temp: BackendStore;
    beforeEach(async () => {
      temp = await backend.create();
    });
    afterEach(() => temp.remove());

    it('reads every file back as it was committed, by every reader', async () => {
      const store = temp.store;
      const texts = { r1: result, r2: cut, r3: surrogate };
      await store.createRuns(Object.keys(texts).map((id) => newRun(id)));
      for (const [runId, text] of Object.entries(texts))
        expect(await commit(store, runId, { 'result.json': text, 'prompt.diff': '+x "y"\n' })).toBe(true);
      // The compact result.json is the column's JSON value; the others are strings.
      expect(await storedColumn(temp.url, 'r1')).toContain(`"result.json":${result}`);
      expect(await storedColumn(temp.url, 'r2')).toContain(`"result.json":${JSON.stringify(cut)}`);
      expect(await storedColumn(temp.url, 'r3')).toContain(`"result.json":${JSON.stringify(surrogate)}`);
      const stored = await store.readResults('g', 0, 10);
      const read = await store.readResultTexts(stored.map((r) => r.seq));
      for (const [i, [runId, text]] of Object.entries(texts).entries()) {
        const files = { 'result.json': text, 'prompt.diff': '+x "y"\n' };
        expect(stored[i]).toMatchObject({ runId, files });
        expect(read[i]).toMatchObject({ runId, files });
        const seq = stored[i]?.seq as number;
        // The explorer's reads, which the database expands: the whole text, a head of it, and the manifest.
        expect(await store.artifactHead(seq, 'result.json')).toEqual({ text, length: text.length });
        expect(await store.artifactHead(seq, 'result.json', 12)).toEqual({
          text: text.slice(0, 12),
          length: text.length,
        });
        const [attempt] = await store.caseAttemptHeads('g', `k-${runId}`, 30);
        expect(attempt?.result).toEqual({ text: text.slice(0, 30), length: text.length });
        expect(attempt?.artifacts).toEqual([
          { name: 'prompt.diff', size: 7 },
          { name: 'result.json', size: text.length },
        ]);
      }
    });

    it("reads a result's steps in the database, a verifier's results among them, from either form of the column", async () => {
      const store = temp.store;
      const graded = JSON.stringify({
        output: 'é "long" answer',
        steps: [
          { stepId: 'prompt', status: 'completed', attempts: 2, output: { text: 'x'.repeat(5000), transcript: [] } },
          {
            stepId: 'verify',
            status: 'failed',
            attempts: 1,
            output: { results: [{ id: 'equals', pass: false, score: 0, reason: 'said "no" \\ \u00e9' }] },
          },
        ],
      });
      const texts = { compact: graded, indented: JSON.stringify(JSON.parse(graded), null, 2), cut, plain: 'plain' };
      await store.createRuns([...Object.keys(texts), 'unfinished'].map((id) => newRun(id)));
      for (const [runId, text] of Object.entries(texts))
        expect(await commit(store, runId, { 'result.json': text })).toBe(true);
      const steps = [
        { stepId: 'prompt', status: 'completed', attempts: 2 },
        {
          stepId: 'verify',
          status: 'failed',
          attempts: 1,
          results: [{ id: 'equals', pass: false, score: 0, reason: 'said "no" \\ é' }],
        },
      ];
      expect(await store.resultSteps('compact')).toEqual(steps);
      expect(await store.resultSteps('indented')).toEqual(steps);
      // Not JSON whole (cut at the cap), not the engine's, or no result: none.
      expect(await store.resultSteps('cut')).toEqual([]);
      expect(await store.resultSteps('plain')).toEqual([]);
      expect(await store.resultSteps('unfinished')).toEqual([]);
    });
  });
}
