import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRows } from '../../src/bundle/compare.js';
import type { IndexRow } from '../../src/bundle/row.js';
import { compareGroups } from '../../src/server/compare-groups.js';
import type { CaseQuery } from '../../src/store/explorer-reads.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { type TempProject, tempProject } from '../support/project.js';
import { manyCases, type SeedCase, seedGroup } from '../support/seed-results.js';

const n = 3000;
const base = [...manyCases(n)];
// Every 4th case flipped (over 500 regressions: the lists are capped, the counts not), every 11th passing with a
// lower score, the first ten gone, new keys between and after the base's, and one case retried to a new outcome.
const head: SeedCase[] = [
  ...base.slice(10).map((c, j) => {
    const i = j + 10;
    if (i % 4 === 0) return { ...c, outcome: c.outcome === 'passed' ? ('failed' as const) : ('passed' as const) };
    return i % 11 === 3 && c.outcome === 'passed' ? { ...c, score: 0.5 } : c;
  }),
  ...Array.from({ length: 30 }, (_, i) => ({ key: `k00${i}50x`, test: `mid${i}`, target: 'alpha', outcome: 'failed' })),
  ...Array.from({ length: 20 }, (_, i) => ({ key: `z${i}`, test: `late${i}`, target: 'gamma', outcome: 'passed' })),
  { key: 'k000101', test: 't50', target: 'beta', outcome: 'error', errorKind: 'timeout', attempt: 2 },
] as SeedCase[];

/** What `results compare` says of the same rows, held whole: the reference the paged walk must match. */
const reference = () => {
  const rowsOf = async (groupId: string) => {
    const rows = new Map<string, IndexRow>();
    for (const r of await store.readResults(groupId, 0, 10_000)) rows.set(r.caseKey, r.row as unknown as IndexRow);
    return [...rows.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
  };
  return Promise.all([rowsOf('base'), rowsOf('head')]).then(([a, b]) => {
    const { gate: _gate, verdict: _verdict, ...c } = compareRows({ base: 'base', head: 'head' }, a, b);
    const cap = <T>(list: T[]) => list.slice(0, 500);
    return {
      ...c,
      regressed: cap(c.regressed),
      fixed: cap(c.fixed),
      score_changed: cap(c.score_changed),
      outcome_changed: cap(c.outcome_changed),
      only_in_base: cap(c.only_in_base),
      only_in_head: cap(c.only_in_head),
    };
  });
};

/** The store as it is, with every case-table read it answers written down. */
const watched = (calls: { groupId: string; query: CaseQuery; rows: number }[]): Store =>
  new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'queryCases') return Reflect.get(target, prop, receiver);
      return async (groupId: string, query: CaseQuery) => {
        const page = await target.queryCases(groupId, query);
        calls.push({ groupId, query, rows: page.rows.length });
        return page;
      };
    },
  });

let project: TempProject;
let store: Store;

beforeAll(async () => {
  project = tempProject({});
  const file = project.path('.proctor/proctor.db');
  await seedGroup(file, 'base', base);
  await seedGroup(file, 'head', head);
  store = await openSqliteStore(file);
}, 60_000);

afterAll(async () => {
  await store?.close();
  project?.remove();
});

describe('compare in the explorer', () => {
  it('matches results compare exactly, walking both runs by key a page at a time', async () => {
    const expected = await reference();
    expect(expected.counts.regressed).toBeGreaterThan(500);
    expect(expected.counts.only_in_base).toBe(10);
    expect(expected.counts.only_in_head).toBe(50);
    for (const pageSize of [7, 1000]) {
      const calls: { groupId: string; query: CaseQuery; rows: number }[] = [];
      const s = watched(calls);
      const got = await compareGroups({ store: s, groupId: 'base' }, { store: s, groupId: 'head' }, pageSize);
      expect(got, `pages of ${pageSize}`).toEqual(expected);
      // Every read is one page by key (never the run whole, never by skipping), and each page is read once.
      expect(
        calls.every((c) => c.query.limit === pageSize && c.query.offset === 0 && c.query.afterKey !== undefined),
      ).toBe(true);
      for (const side of ['base', 'head'])
        expect(calls.filter((c) => c.groupId === side).length).toBeLessThanOrEqual(
          Math.ceil(head.length / pageSize) + 1,
        );
      // The two sides advance together while both have pages: neither is read ahead of the other by more than a
      // page or two, so what is held is a page of each, whatever the runs' size.
      let lead = 0;
      let ahead = 0;
      const finished = new Set<string>();
      for (const c of calls) {
        if (finished.size === 0) lead += c.groupId === 'base' ? 1 : -1;
        if (c.rows < pageSize) finished.add(c.groupId);
        ahead = Math.max(ahead, Math.abs(lead));
      }
      expect(ahead).toBeLessThanOrEqual(2);
    }
  });
});
