import type { IndexRow } from '../../src/bundle/row.js';
import type { GroupSummary, CaseRow as StoredCaseRow } from '../../src/store/explorer-reads.js';

// The one place the front end talks to the server: JSON reads, and mutations carrying the CSRF token.
const csrf = (): string => document.querySelector('meta[name="proctor-csrf"]')?.getAttribute('content') ?? '';

export const getJson = async <T>(path: string): Promise<T> => {
  const res = await fetch(`/api/v1${path}`, { headers: { Accept: 'application/json' } });
  const body = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `${res.status}`);
  return body;
};

const early = new Map<string, Promise<unknown>>();

/** Starts a read that a component mounted later takes over: a table's first page, fetched with its header. */
export const prefetch = (path: string): void => {
  early.set(path, getJson(path));
};

export const getPrefetched = <T>(path: string): Promise<T> => {
  const started = early.get(path) as Promise<T> | undefined;
  early.delete(path);
  return started ?? getJson<T>(path);
};

export const postJson = async <T>(path: string, data: unknown): Promise<T> => {
  const res = await fetch(`/api/v1${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Proctor-CSRF': csrf() },
    body: JSON.stringify(data),
  });
  const body = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `${res.status}`);
  return body;
};

// The server's own types: one definition of what crosses the wire (type-only, so nothing of src/ is bundled).
export type { AttemptView, Clipped } from '../../src/server/case-view.js';
export type { GroupComparison as Comparison } from '../../src/server/compare-groups.js';
export type { GroupListing } from '../../src/server/summaries.js';
export type { GroupCost, GroupSummary, MatrixCell } from '../../src/store/explorer-reads.js';
export type { ProgressRow } from '../../src/store/store.js';

/** A bundle row as the pages read it: any field may be missing from a row another version wrote. */
export type RowView = Partial<IndexRow>;

/** A case table row; its bundle row typed for reading. */
export type CaseRow = Omit<StoredCaseRow, 'row'> & { row: RowView };

export const finished = (g: GroupSummary): number => g.total - g.queued - g.running;
export const isLive = (g: GroupSummary): boolean => g.queued + g.running > 0;
