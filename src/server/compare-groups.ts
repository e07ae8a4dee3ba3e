import { type CaseChange, type Comparison, compareRows, type PassRate, type TargetDelta } from '../bundle/compare.js';
import type { IndexRow } from '../bundle/row.js';
import type { Store } from '../store/store.js';

/** Rows read per request from each side, and so the most either side holds. */
const comparePageSize = 1000;
/** Listed changes per kind in a response; the counts stay exact. */
const listed = 500;

const kinds = ['regressed', 'fixed', 'score_changed', 'outcome_changed', 'only_in_base', 'only_in_head'] as const;

/**
 * Two eval runs compared case by case, as `results compare` does, with each list of changes capped for the page.
 * Not a CI gate: the explorer shows the changes, `results compare` decides.
 */
export type GroupComparison = Omit<Comparison, 'gate' | 'verdict'>;

/** One side: its latest rows in key order, read a page at a time, and those read but not yet compared. */
class KeyWalk {
  private afterKey = '';
  private exhausted = false;
  rows: IndexRow[] = [];

  constructor(
    private readonly store: Store,
    private readonly groupId: string,
    private readonly pageSize: number,
  ) {}

  /** Reads the next page once every row read so far is compared. */
  async fill(): Promise<void> {
    if (this.rows.length > 0 || this.exhausted) return;
    const page = await this.store.queryCases(this.groupId, {
      offset: 0,
      limit: this.pageSize,
      countless: true,
      afterKey: this.afterKey,
    });
    this.rows = page.rows.map((r) => r.row as unknown as IndexRow);
    this.exhausted = page.rows.length < this.pageSize;
    this.afterKey = page.rows.at(-1)?.caseKey ?? this.afterKey;
  }

  /** The highest key this side may still hold below: its last read key, or none once it has no more pages. */
  get bound(): string | undefined {
    return this.exhausted ? undefined : this.rows.at(-1)?.key;
  }

  /** The rows read up to `bound` (every one when undefined), taken out. */
  take(bound: string | undefined): IndexRow[] {
    const end = bound === undefined ? this.rows.length : this.rows.findIndex((r) => r.key > bound);
    return this.rows.splice(0, end === -1 ? this.rows.length : end);
  }
}

const addRate = (sum: PassRate | null, r: PassRate | null): PassRate | null => {
  if (!r) return sum;
  const total = (sum?.total ?? 0) + r.total;
  const passed = (sum?.passed ?? 0) + r.passed;
  return { total, passed, pass_rate: passed / total };
};

const addDelta = (sum: TargetDelta | undefined, d: TargetDelta): TargetDelta => {
  const base = addRate(sum?.base ?? null, d.base);
  const head = addRate(sum?.head ?? null, d.head);
  return { target: d.target, base, head, delta: base && head ? head.pass_rate - base.pass_rate : null };
};

/**
 * Compares two eval runs (from the project's store or a bundle index) by walking both in key order, a page at a
 * time, and comparing each stretch of keys both sides have read as `results compare` would; the stretches' counts
 * and pass rates add up. Memory holds two pages and the capped lists, whatever the runs' size. Case keys are hex
 * hashes, which every collation and JavaScript order alike, so the store's key order is the one compared here.
 */
export const compareGroups = async (
  base: { store: Store; groupId: string },
  head: { store: Store; groupId: string },
  pageSize = comparePageSize,
): Promise<GroupComparison> => {
  const a = new KeyWalk(base.store, base.groupId, pageSize);
  const b = new KeyWalk(head.store, head.groupId, pageSize);
  const targets = new Map<string, TargetDelta>();
  let overall: TargetDelta = { target: 'all', base: null, head: null, delta: null };
  const counts: Comparison['counts'] = {
    common: 0,
    unchanged: 0,
    regressed: 0,
    fixed: 0,
    score_changed: 0,
    outcome_changed: 0,
    only_in_base: 0,
    only_in_head: 0,
  };
  const lists = Object.fromEntries(kinds.map((k) => [k, [] as CaseChange[]])) as Record<
    (typeof kinds)[number],
    CaseChange[]
  >;
  for (;;) {
    await Promise.all([a.fill(), b.fill()]);
    if (a.rows.length === 0 && b.rows.length === 0) break;
    // Below the smaller of the two bounds, each side has read every key it has: that stretch compares whole.
    const bound = [a.bound, b.bound].filter((k): k is string => k !== undefined).sort()[0];
    const stretch = compareRows({ base: base.groupId, head: head.groupId }, a.take(bound), b.take(bound));
    for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += stretch.counts[k];
    for (const k of kinds) lists[k].push(...stretch[k].slice(0, listed - lists[k].length));
    for (const d of stretch.targets) targets.set(d.target, addDelta(targets.get(d.target), d));
    overall = addDelta(overall, stretch.overall);
  }
  return {
    schema: 'proctor.compare/1',
    base: base.groupId,
    head: head.groupId,
    targets: [...targets.values()].sort((x, y) => (x.target < y.target ? -1 : 1)),
    overall,
    counts,
    ...lists,
  };
};
