import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { eventually } from '../support/eventually.js';
import { commitCases, type SeedCase } from '../support/seed-results.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const cases: SeedCase[] = [
  { key: 'a', test: 'upper', target: 'alpha', outcome: 'passed', output: '100% done_ok' },
  { key: 'b', test: 'upper', target: 'beta', outcome: 'failed', score: 0.25 },
  { key: 'c', test: 'count', target: 'alpha', outcome: 'error', errorKind: 'timeout', evalPath: 'evals/two.eval.yaml' },
  { key: 'd', test: 'count', target: 'beta', outcome: 'passed' },
];

/** Statements run on a backend's database over a connection of their own, as another program would. */
const execRaw = async (url: string, statements: string[]): Promise<void> => {
  if (url.startsWith('sqlite:')) {
    const db = new BetterSqlite3(url.slice('sqlite:'.length));
    for (const s of statements) db.exec(s);
    db.close();
    return;
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const s of statements) await client.query(s);
  } finally {
    await client.end();
  }
};

for (const backend of await storeBackends()) {
  describe.skipIf(backend.unavailable)(`explorer reads (${backend.name})`, () => {
    if (backend.unavailable) it.skip(backend.unavailable, () => {});
    let temp: BackendStore;
    let store: Store;
    beforeEach(async () => {
      temp = await backend.create();
      store = temp.store;
      await commitCases(store, 'g1', cases, 'g1-first');
      // c is retried and passes: the table and the matrix keep only its latest attempt.
      await commitCases(
        store,
        'g1',
        [{ key: 'c', test: 'count', target: 'alpha', outcome: 'passed', attempt: 2, evalPath: 'evals/two.eval.yaml' }],
        'g1-retry',
      );
      await commitCases(store, 'g2', cases.slice(0, 1), 'g2');
    });
    afterEach(() => temp.remove());

    it('summarises groups from the run index', async () => {
      const groups = await store.listGroups({ limit: 10 });
      expect(groups.map((g) => g.groupId).sort()).toEqual(['g1', 'g2']);
      const [g1] = await store.listGroups({ limit: 1, groupId: 'g1' });
      expect(g1).toMatchObject({ kind: 'eval', total: 5, passed: 3, failed: 1, error: 1, queued: 0, running: 0 });
      expect(g1?.targets).toEqual(['alpha', 'beta']);
      // Older groups a page at a time: those created before the last one shown (ties broken by id).
      await commitCases(store, 'g3', cases.slice(0, 1), 'g3');
      const newest = await store.listGroups({ limit: 2 });
      expect(newest.map((g) => g.groupId)).toEqual(['g3', 'g2']);
      const last = newest[1] as { createdAt: number; groupId: string };
      const older = await store.listGroups({ limit: 2, before: { createdAt: last.createdAt, groupId: last.groupId } });
      expect(older.map((g) => g.groupId)).toEqual(['g1']);
    });

    it('pages and filters the latest attempt of each case', async () => {
      const all = await store.queryCases('g1', { offset: 0, limit: 10 });
      expect(all.total).toBe(4);
      expect(all.rows.map((r) => [r.caseKey, r.outcome, r.attempt])).toEqual([
        ['a', 'passed', 1],
        ['b', 'failed', 1],
        ['d', 'passed', 1],
        ['c', 'passed', 2],
      ]);
      expect((await store.queryCases('g1', { offset: 1, limit: 2 })).rows.map((r) => r.caseKey)).toEqual(['b', 'd']);
      expect((await store.queryCases('g1', { offset: 0, limit: 10, outcome: 'passed', target: 'beta' })).total).toBe(1);
      expect((await store.queryCases('g1', { offset: 0, limit: 10, evalPath: 'evals/two.eval.yaml' })).total).toBe(1);
      // The error was superseded by the passing retry, so no latest row has it.
      expect((await store.queryCases('g1', { offset: 0, limit: 10, errorKind: 'timeout' })).total).toBe(0);
      // `%` and `_` are literal; the text lives in the artifacts.
      expect(
        (await store.queryCases('g1', { offset: 0, limit: 10, q: '100% done_ok' })).rows.map((r) => r.caseKey),
      ).toEqual(['a']);
      expect((await store.queryCases('g1', { offset: 0, limit: 10, q: '1_0' })).total).toBe(0);
      const countless = await store.queryCases('g1', { offset: 0, limit: 1, countless: true });
      expect(countless).toMatchObject({ total: -1, rows: [{ caseKey: 'a' }] });
      // Walking by seq: the latest attempts after a commit, as compare reads a whole run.
      const after = await store.queryCases('g1', { offset: 0, limit: 10, afterSeq: countless.rows[0]?.seq as number });
      expect(after.rows.map((r) => r.caseKey)).toEqual(['b', 'd', 'c']);
      // Walking by key: each key's latest attempt after the one given, as compare matches two runs case by case.
      const byKey = (afterKey: string, limit: number) =>
        store
          .queryCases('g1', { offset: 0, limit, countless: true, afterKey })
          .then((p) => p.rows.map((r) => [r.caseKey, r.attempt]));
      expect(await byKey('', 2)).toEqual([
        ['a', 1],
        ['b', 1],
      ]);
      expect(await byKey('b', 10)).toEqual([
        ['c', 2],
        ['d', 1],
      ]);
      expect(await byKey('d', 10)).toEqual([]);
      // A live stream's rows are the table's: the artifact files (a 10 MB result.json can be) stay in the store.
      // On PostgreSQL a result is followed once every older transaction has ended: polled.
      const followed = await eventually(async () => {
        const rows = await store.followResults('g1', '0', 10);
        return rows.length === 5 ? rows : undefined;
      });
      expect(followed.map((r) => r.caseKey)).toEqual(['a', 'b', 'c', 'd', 'c']);
      expect(followed.every((r) => !('files' in r))).toBe(true);
    });

    it("gives a store made before the matrix's test column that column on open, from the results it holds", async () => {
      // A store that old predates the schema version table too.
      await execRaw(temp.url, [
        'drop index results_group_matrix',
        'alter table results drop column test',
        'drop table proctor_schema',
      ]);
      const reopened = await temp.open();
      const cells = await reopened.caseMatrix('g1', 100);
      expect(cells.map((c) => [c.test, c.target, c.total])).toEqual([
        ['count', 'beta', 1],
        ['upper', 'alpha', 1],
        ['upper', 'beta', 1],
        ['count', 'alpha', 1],
      ]);
      // Written results get it too: nothing sets it but the database.
      await commitCases(reopened, 'g4', [{ key: 'z', test: 'late', target: 'alpha', outcome: 'passed' }], 'g4');
      expect((await reopened.caseMatrix('g4', 100)).map((c) => c.test)).toEqual(['late']);
    });

    it('reads attempts, results by seq, the matrix and the facets', async () => {
      const attempts = await store.caseAttemptHeads('g1', 'c', 20);
      expect(attempts.map((a) => [a.attempt, a.row.outcome])).toEqual([
        [1, 'error'],
        [2, 'passed'],
      ]);
      // Only the head of result.json leaves the database, with the whole one's length and the manifest.
      const whole = await store.artifactHead(attempts[1]?.seq as number, 'result.json');
      expect(whole?.text).toContain('"outcome":"passed"');
      expect(attempts[1]?.result).toEqual({ text: whole?.text.slice(0, 20), length: whole?.text.length });
      expect(attempts[1]?.artifacts).toEqual([{ name: 'result.json', size: whole?.text.length }]);
      expect(await store.artifactHead(attempts[1]?.seq as number, 'result.json', 5)).toEqual({
        text: whole?.text.slice(0, 5),
        length: whole?.length,
      });
      expect(await store.artifactHead(attempts[1]?.seq as number, 'nope.txt')).toBeUndefined();
      expect(await store.artifactHead(999_999, 'result.json')).toBeUndefined();
      const cells = await store.caseMatrix('g1', 100);
      expect(cells.map((c) => [c.evalPath, c.test, c.target, c.passed, c.total])).toEqual(
        [
          ['evals/seed.eval.yaml', 'upper', 'alpha', 1, 1],
          ['evals/seed.eval.yaml', 'upper', 'beta', 0, 1],
          ['evals/two.eval.yaml', 'count', 'alpha', 1, 1],
          ['evals/seed.eval.yaml', 'count', 'beta', 1, 1],
        ].sort((x, y) => (`${x[0]}${x[1]}${x[2]}` < `${y[0]}${y[1]}${y[2]}` ? -1 : 1)),
      );
      expect(cells.find((c) => c.target === 'beta' && c.test === 'upper')?.meanScore).toBe(0.25);
      expect(await store.groupCost('g1')).toEqual({ targetUsd: 0, judgeUsd: null });
      await commitCases(
        store,
        'spent',
        [
          { key: 'a', test: 'a', target: 'alpha', outcome: 'passed', costUsd: 0.5, judgeCostUsd: 0.125 },
          { key: 'a', test: 'a', target: 'alpha', outcome: 'passed', attempt: 2, costUsd: 0.25 },
          { key: 'b', test: 'b', target: 'alpha', outcome: 'passed', costUsd: null },
        ],
        'spent',
      );
      // Every attempt spent: the retried one counts too; an unpriced call adds nothing.
      expect(await store.groupCost('spent')).toEqual({ targetUsd: 0.75, judgeUsd: 0.125 });
      expect(await store.groupCost('none')).toEqual({ targetUsd: null, judgeUsd: null });
      // A journal entry is read as the heads of its ops and output: a step's 10 MB transcript never leaves whole.
      const long = 'y'.repeat(3_000_000);
      const entry = { instanceId: 'i-j', stepId: 'ask', attempt: 1, createdAt: 7 };
      await store.appendJournal({
        ...entry,
        seq: 1,
        ops: [{ op: 'set', path: 'outputs.ask', value: 'hi' }],
        output: { transcript: [long] },
      });
      await store.appendJournal({ ...entry, seq: 2, stepId: 'verify', ops: [], output: { results: [] } });
      const heads = await store.journalHeads('i-j', 30);
      expect(heads).toEqual([
        {
          seq: 1,
          stepId: 'ask',
          attempt: 1,
          createdAt: 7,
          ops: { text: '[{"op":"set","path":"outputs.a', length: 48 },
          output: { text: `{"transcript":["${'y'.repeat(14)}`, length: long.length + 19 },
        },
        {
          seq: 2,
          stepId: 'verify',
          attempt: 1,
          createdAt: 7,
          ops: { text: '[]', length: 2 },
          output: { text: '{"results":[]}', length: 14 },
        },
      ]);
      expect(await store.journalHeads('none', 30)).toEqual([]);
      const facets = await store.caseFacets('g1');
      expect(facets).toMatchObject({
        targets: ['alpha', 'beta'],
        evals: ['evals/seed.eval.yaml', 'evals/two.eval.yaml'],
        errorKinds: ['timeout'],
      });
    });
  });
}
