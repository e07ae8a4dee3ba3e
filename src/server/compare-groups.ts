import { type Comparison, compareRows } from '../bundle/compare.js';
import type { IndexRow } from '../bundle/row.js';
import type { Store } from '../store/store.js';

const pageSize = 1000;
/** Listed changes per kind in a response; the counts stay exact. */
const listed = 500;

/**
 * A group's latest row per case key, a page at a time in commit order: the case table's query, so only the
 * rows are read, never the artifact files.
 */
const latestRows = async (store: Store, groupId: string): Promise<IndexRow[]> => {
  const rows: IndexRow[] = [];
  for (let afterSeq = 0; ; ) {
    const page = await store.queryCases(groupId, { offset: 0, limit: pageSize, countless: true, afterSeq });
    for (const r of page.rows) rows.push(r.row as unknown as IndexRow);
    if (page.rows.length < pageSize) return rows;
    afterSeq = page.rows[page.rows.length - 1]!.seq;
  }
};

/** `results compare` over two eval runs of the store, with each list of changes capped for the page. */
export const compareGroups = async (
  base: { store: Store; groupId: string },
  head: { store: Store; groupId: string },
): Promise<Comparison> => {
  const [a, b] = await Promise.all([latestRows(base.store, base.groupId), latestRows(head.store, head.groupId)]);
  const c = compareRows({ base: base.groupId, head: head.groupId }, a, b);
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
