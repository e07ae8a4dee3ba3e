import { type Comparison, compareRows } from '../bundle/compare.js';
import type { IndexRow } from '../bundle/row.js';
import type { Store } from '../store/store.js';

const pageSize = 1000;
/** Listed changes per kind in a response; the counts stay exact. */
const listed = 500;

/** A group's latest committed row per case key, read in commit order a page at a time. */
const latestRows = async (store: Store, groupId: string): Promise<Map<string, IndexRow>> => {
  const latest = new Map<string, IndexRow>();
  for (let after = 0; ; ) {
    const page = await store.readResults(groupId, after, pageSize);
    for (const r of page) latest.set(r.caseKey, r.row as unknown as IndexRow);
    if (page.length < pageSize) return latest;
    after = page[page.length - 1]!.seq;
  }
};

/** `results compare` over two eval runs of the store, with each list of changes capped for the page. */
export const compareGroups = async (
  base: { store: Store; groupId: string },
  head: { store: Store; groupId: string },
): Promise<Comparison> => {
  const [a, b] = await Promise.all([latestRows(base.store, base.groupId), latestRows(head.store, head.groupId)]);
  const c = compareRows({ base: base.groupId, head: head.groupId }, a.values(), b.values());
  const cap = <T>(list: T[]): T[] => list.slice(0, listed);
  return {
    ...c,
    regressed: cap(c.regressed),
    fixed: cap(c.fixed),
    score_changed: cap(c.score_changed),
    outcome_changed: cap(c.outcome_changed),
    only_in_base: cap(c.only_in_base),
    only_in_head: cap(c.only_in_head),
  };
};
