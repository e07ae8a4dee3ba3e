import { remember } from '../bounded-map.js';
import type {
  CaseFacets,
  CasePage,
  CaseQuery,
  GroupCost,
  GroupCursor,
  GroupSummary,
  MatrixCell,
} from '../store/explorer-reads.js';
import type { ProgressRow, Store } from '../store/store.js';

export interface GroupDetail {
  summary: GroupSummary;
  progress: ProgressRow[];
  facets: CaseFacets;
  /** Where the page's live stream starts: after the commits this detail counted. */
  cursor: string;
}

const listTtlMs = 1000;
// Summing a run's spend parses every result's row (about 0.2 s for 100k on SQLite): a live run's is re-read
// at most this often, a finished run's once.
const liveCostTtlMs = 5000;

/** A runs list entry: its counts, and what it spent. */
export type GroupListing = GroupSummary & { cost: GroupCost };
// Entries kept per cache: memory is bounded by these, never by how big a run is.
const kept = 500;

/**
 * Answers the explorer's aggregate reads (counts over a whole run, up to 100k rows each) from memory when the
 * store cannot have changed them: a finished group never changes again (a terminal status is final), and a
 * case count stays right while the group's last commit does. The SQLite driver is synchronous, so an aggregate
 * repeated for every page load and every live client would stall the whole server.
 */
export class Summaries {
  private list: { at: number; limit: number; groups: Promise<GroupListing[]> } | undefined;
  private readonly costs = new Map<string, { at: number | null; cost: Promise<GroupCost> }>();
  private readonly finished = new Map<string, GroupDetail>();
  private readonly counts = new Map<string, { committed: number; total: number }>();
  private readonly matrices = new Map<string, MatrixCell[]>();

  constructor(private readonly store: Store) {}

  /**
   * The newest groups, shared for a second by every client asking for as many (the page and its live feed); or
   * those listed after `before`, read each time.
   */
  groups(limit: number, before?: GroupCursor): Promise<GroupListing[]> {
    const read = () =>
      this.store
        .listGroups({ limit, ...(before ? { before } : {}) })
        .then((groups) =>
          Promise.all(groups.map(async (g) => ({ ...g, cost: await this.cost(g.groupId, g.queued + g.running > 0) }))),
        );
    if (before) return read();
    if (!this.list || this.list.limit !== limit || Date.now() - this.list.at > listTtlMs)
      this.list = { at: Date.now(), limit, groups: read() };
    return this.list.groups;
  }

  /** A group's spend; `live`: it may still change (else it is kept for good). */
  cost(groupId: string, live: boolean): Promise<GroupCost> {
    const known = this.costs.get(groupId);
    if (known && (known.at === null || Date.now() - known.at < liveCostTtlMs)) return known.cost;
    const cost = this.store.groupCost(groupId);
    // Checked before reading, as `group` does: a group finished then is finished in what was read.
    remember(this.costs, groupId, { at: live ? Date.now() : null, cost }, kept);
    cost.catch(() => this.costs.delete(groupId));
    return cost;
  }

  async isLive(groupId: string): Promise<boolean> {
    return (await this.store.listRuns({ groupId, statuses: ['QUEUED', 'RUNNING'], limit: 1 })).length > 0;
  }

  async group(groupId: string): Promise<GroupDetail | undefined> {
    const known = this.finished.get(groupId);
    if (known) return known;
    const live = await this.isLive(groupId);
    const [summary] = await this.store.listGroups({ limit: 1, groupId });
    if (!summary) return undefined;
    const [progress, facets, cursor] = await Promise.all([
      this.store.groupProgress(groupId),
      this.store.caseFacets(groupId),
      this.store.resultCursor(groupId),
    ]);
    const detail = { summary, progress, facets, cursor };
    // Checked before reading: a group that was finished then is finished in what was read.
    if (!live) remember(this.finished, groupId, detail, kept);
    return detail;
  }

  /** The test × target matrix (at most `limit` cells), kept once the group has finished. */
  async matrix(groupId: string, limit: number): Promise<MatrixCell[]> {
    const known = this.matrices.get(groupId);
    if (known) return known;
    const live = await this.isLive(groupId);
    const cells = await this.store.caseMatrix(groupId, limit);
    if (!live) remember(this.matrices, groupId, cells, kept);
    return cells;
  }

  /**
   * A page of cases; the count over all matching is reused while the group has no new commit. Results are only
   * ever added, so their number changes with every commit (the highest `seq` does not on PostgreSQL, where a
   * smaller one can commit later).
   */
  async cases(groupId: string, query: CaseQuery): Promise<CasePage> {
    const { offset: _offset, limit: _limit, ...filters } = query;
    const key = JSON.stringify([groupId, filters]);
    const committed = await this.store.countResults(groupId);
    const known = this.counts.get(key);
    if (known && known.committed === committed) {
      const { total } = known;
      // Past the middle, skipping from the end is shorter: the last page of 100k cases skips 0, not 99,800.
      if (query.offset > total / 2) {
        const limit = Math.max(0, Math.min(query.limit, total - query.offset));
        const offset = Math.max(0, total - query.offset - limit);
        const page = await this.store.queryCases(groupId, {
          ...query,
          offset,
          limit,
          countless: true,
          descending: true,
        });
        return { total, rows: limit === 0 ? [] : page.rows.reverse() };
      }
      const page = await this.store.queryCases(groupId, { ...query, countless: true });
      return { total, rows: page.rows };
    }
    const page = await this.store.queryCases(groupId, query);
    remember(this.counts, key, { committed, total: page.total }, kept);
    return page;
  }
}
