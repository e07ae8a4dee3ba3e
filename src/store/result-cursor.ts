import { type Kysely, sql } from 'kysely';
import type { JsonObject } from '../records.js';
import { isPostgres } from './explorer-reads.js';
import type { Database } from './schema.js';
import type { StoredResult } from './store.js';

/**
 * A committed result with the cursor that resumes just after it (a live stream's event id). Its artifact files
 * (a 10 MB result.json can be) are not read: a stream sends the case table's row.
 */
export type FollowedResult = Omit<StoredResult, 'files'> & { cursor: string };

const columns = ['seq', 'runId', 'groupId', 'caseKey', 'attempt', 'target', 'evalPath', 'row', 'committedAt'] as const;

const followed = (
  r: { seq: number; row: string; committedAt: number | string } & Omit<
    StoredResult,
    'seq' | 'row' | 'files' | 'committedAt'
  >,
  cursor: string,
): FollowedResult => ({
  ...r,
  seq: Number(r.seq),
  row: JSON.parse(r.row) as JsonObject,
  committedAt: Number(r.committedAt),
  cursor,
});

/** A cursor as a client may send it back: `seq` (SQLite), or `txid-seq` (PostgreSQL). */
export const isResultCursor = (text: string): boolean => /^\d{1,19}(-\d{1,19})?$/.test(text);

type Db = Kysely<Database>;

const parts = (cursor: string): [bigint, bigint] => {
  const [a, b] = cursor.split('-');
  return b === undefined ? [0n, BigInt(a ?? 0)] : [BigInt(a ?? 0), BigInt(b)];
};

/**
 * Every transaction below this id has ended (committed or not), so no row with a smaller `txid` can still
 * appear: PostgreSQL draws `seq` when a transaction inserts, not when it commits, so a reader that kept only
 * the highest `seq` it saw would skip a row whose transaction drew a smaller one and committed later.
 */
const settledTxid = sql<string>`pg_snapshot_xmin(pg_current_snapshot())::text::bigint`;

/**
 * A group's results committed after `after`, at most `limit`, in an order no later commit can precede: `seq`
 * on SQLite (one writer at a time, so commit order), `(txid, seq)` over settled transactions on PostgreSQL.
 */
export const followResults = async (
  db: Db,
  groupId: string,
  after: string,
  limit: number,
): Promise<FollowedResult[]> => {
  const [txid, seq] = parts(after);
  if (!isPostgres(db)) {
    const rows = await db
      .selectFrom('results')
      .select(columns)
      .where('groupId', '=', groupId)
      .where('seq', '>', Number(seq))
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((r) => followed(r, String(r.seq)));
  }
  const rows = await db
    .selectFrom('results')
    .select(columns)
    .select(sql<string>`txid`.as('txid'))
    .where('groupId', '=', groupId)
    .where(sql<boolean>`(txid, seq) > (${String(txid)}::bigint, ${String(seq)}::bigint)`)
    .where(sql<boolean>`txid < ${settledTxid}`)
    .orderBy(sql`txid`)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map(({ txid, ...r }) => followed(r, `${txid}-${r.seq}`));
};

/** Where a follower starts to get only what commits from now on (what it has read so far is before it). */
export const resultCursorNow = async (db: Db, groupId: string): Promise<string> => {
  if (!isPostgres(db)) {
    const last = await db
      .selectFrom('results')
      .select((eb) => eb.fn.max<number | string | null>('seq').as('seq'))
      .where('groupId', '=', groupId)
      .executeTakeFirst();
    return String(Number(last?.seq ?? 0));
  }
  const last = await db
    .selectFrom('results')
    .select([sql<string>`txid`.as('txid'), 'seq'])
    .where('groupId', '=', groupId)
    .where(sql<boolean>`txid < ${settledTxid}`)
    .orderBy(sql`txid`, 'desc')
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return last ? `${last.txid}-${last.seq}` : '0-0';
};
