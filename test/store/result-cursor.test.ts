import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { commitCases, type SeedCase } from '../support/seed-results.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const aCase = (key: string): SeedCase => ({ key, test: key, target: 'alpha', outcome: 'passed' });

/** Follows a group from `cursor` to its end, as a live stream does: the keys read and the cursor reached. */
const follow = async (temp: BackendStore, cursor: string): Promise<{ keys: string[]; cursor: string }> => {
  const keys: string[] = [];
  for (;;) {
    const page = await temp.store.followResults('g', cursor, 2);
    for (const r of page) {
      keys.push(r.caseKey);
      cursor = r.cursor;
    }
    if (page.length < 2) return { keys, cursor };
  }
};

for (const backend of await storeBackends()) {
  describe.skipIf(backend.unavailable)(`result cursor (${backend.name})`, () => {
    if (backend.unavailable) it.skip(backend.unavailable, () => {});
    let temp: BackendStore;
    beforeEach(async () => {
      temp = await backend.create();
    });
    afterEach(async () => {
      await temp.remove();
    });

    it('follows a group page by page from any cursor, and starts after what is committed', async () => {
      await commitCases(temp.store, 'g', ['a', 'b', 'c'].map(aCase), 'first');
      await commitCases(temp.store, 'other', [aCase('x')], 'other');
      const all = await eventually(async () => {
        const f = await follow(temp, '0');
        return f.keys.length === 3 ? f : undefined;
      });
      expect(all.keys).toEqual(['a', 'b', 'c']);
      const start = await temp.store.resultCursor('g');
      expect(start).toBe(all.cursor);
      await commitCases(temp.store, 'g', [aCase('d')], 'second');
      const later = await eventually(async () => {
        const f = await follow(temp, start);
        return f.keys.length ? f : undefined;
      });
      expect(later.keys).toEqual(['d']);
      expect(await temp.store.followResults('none', '0', 10)).toEqual([]);
    });

    it.runIf(backend.name === 'postgres')(
      'misses no result whose transaction drew a smaller seq and committed after a later one',
      async () => {
        await commitCases(temp.store, 'g', [aCase('a')], 'first');
        const { default: pg } = await import('pg');
        const slow = new pg.Client({ connectionString: temp.url });
        await slow.connect();
        try {
          // The slow writer draws its seq first and commits last.
          await slow.query('begin');
          await slow.query(
            `insert into results (run_id, group_id, case_key, attempt, target, eval_path, outcome, row, files, committed_at)
             values ('slow', 'g', 'slow', 1, 'alpha', 'e', 'passed', '{}', '{}', 0)`,
          );
          await commitCases(temp.store, 'g', [aCase('fast')], 'fast');
          // Settled results appear as other transactions of the server end (other clients' too): polled.
          const before = await eventually(async () => {
            const f = await follow(temp, '0');
            return f.keys.length ? f : undefined;
          });
          expect(before.keys).toEqual(['a']);
          await slow.query('commit');
          const after = await eventually(async () => {
            const f = await follow(temp, before.cursor);
            return f.keys.length === 2 ? f : undefined;
          });
          expect(after.keys.sort()).toEqual(['fast', 'slow']);
          const seqs = (await temp.store.readResults('g', 0, 10)).map((r) => [r.caseKey, r.seq]);
          // The case this guards: by seq alone, a reader at `fast` would have passed `slow`.
          expect(Object.fromEntries(seqs).slow).toBeLessThan(Object.fromEntries(seqs).fast);
        } finally {
          await slow.end();
        }
      },
    );
  });
}
