import { type ExpressionBuilder, type Kysely, PostgresAdapter, type RawBuilder, type Selectable, sql } from 'kysely';
import type { JsonObject } from '../records.js';
import { parseFilesColumn } from './files-column.js';
import type { Database, ResultsTable } from './schema.js';
import type { StoredResult } from './store.js';

/** One eval run (or task run group) as the explorer's runs list shows it, from counts over the run index. */
export interface GroupSummary {
  groupId: string;
  /** `eval` when its runs are cases, else `task`. */
  kind: 'eval' | 'task';
  total: number;
  queued: number;
  running: number;
  passed: number;
  failed: number;
  error: number;
  canceled: number;
  /** Terminal runs without an outcome (task runs): COMPLETED or FAILED. */
  completed: number;
  failedRuns: number;
  targets: string[];
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** Which latest case results a page of the case table holds. `q` matches the bundle row and artifact text. */
export interface CaseQuery {
  outcome?: string;
  target?: string;
  evalPath?: string;
  errorKind?: string;
  q?: string;
  offset: number;
  limit: number;
  /** Skip counting every match (the caller knows it): `total` is then -1. */
  countless?: boolean;
  /** Newest commit first: a page near the end is read from the end instead of skipping all before it. */
  descending?: boolean;
  /** Only commits after this one: a reader walking every case pages by `seq` instead of skipping (ascending). */
  afterSeq?: number;
  /**
   * Key order, only keys after this one (`''`: from the first): a reader matching two runs case by case walks both
   * by key, a page at a time, on the key index.
   */
  afterKey?: string;
}

/** A case table row: the result's columns and its bundle row; never the artifact files. */
export type CaseRow = Pick<StoredResult, 'seq' | 'runId' | 'caseKey' | 'attempt' | 'target' | 'evalPath' | 'row'> & {
  outcome: string;
  score: number | null;
  errorKind: string | null;
};

export interface CasePage {
  total: number;
  rows: CaseRow[];
}

/** A (eval, test, target) cell of a run's matrix: its latest cases' outcomes. */
export interface MatrixCell {
  evalPath: string;
  test: string;
  target: string;
  total: number;
  passed: number;
  failed: number;
  error: number;
  meanScore: number | null;
}

type ResultsBuilder = ExpressionBuilder<Database, 'results'>;
type Db = Kysely<Database>;

/** Where the dialects spell SQL apart (JSON extraction, transaction ids). */
export const isPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

/** Only a key's latest attempt: the case table and matrix show where each case stands now. */
const isLatest = (eb: ResultsBuilder) =>
  eb.not(
    eb.exists(
      eb
        .selectFrom('results as later')
        .select('later.seq')
        .whereRef('later.groupId', '=', 'results.groupId')
        .whereRef('later.caseKey', '=', 'results.caseKey')
        .whereRef('later.seq', '>', 'results.seq'),
    ),
  );

// LIKE treats % and _ as wildcards; a user's text query means them literally.
const likePattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const casesWhere = (groupId: string, query: CaseQuery) => (eb: ResultsBuilder) => {
  const parts = [eb('results.groupId', '=', groupId), isLatest(eb)];
  if (query.afterSeq !== undefined) parts.push(eb('results.seq', '>', query.afterSeq));
  if (query.afterKey !== undefined) parts.push(eb('results.caseKey', '>', query.afterKey));
  if (query.outcome) parts.push(eb('results.outcome', '=', query.outcome));
  if (query.target) parts.push(eb('results.target', '=', query.target));
  if (query.evalPath) parts.push(eb('results.evalPath', '=', query.evalPath));
  if (query.errorKind) parts.push(eb('results.errorKind', '=', query.errorKind));
  if (query.q) {
    const pattern = likePattern(query.q);
    parts.push(
      eb.or([
        sql<boolean>`${eb.ref('results.row')} like ${pattern} escape '\\'`,
        sql<boolean>`${eb.ref('results.files')} like ${pattern} escape '\\'`,
      ]),
    );
  }
  return eb.and(parts);
};

/** A result's stored columns: all but the generated `test`, which a reader of whole results does not need. */
export const storedColumns = [
  'seq',
  'runId',
  'groupId',
  'caseKey',
  'attempt',
  'target',
  'evalPath',
  'row',
  'files',
  'committedAt',
] as const;

export const toStoredResult = (r: Pick<Selectable<ResultsTable>, (typeof storedColumns)[number]>): StoredResult => ({
  seq: Number(r.seq),
  runId: r.runId,
  groupId: r.groupId,
  caseKey: r.caseKey,
  attempt: r.attempt,
  target: r.target,
  evalPath: r.evalPath,
  row: JSON.parse(r.row) as JsonObject,
  files: parseFilesColumn(r.files),
  committedAt: Number(r.committedAt),
});

const countWhen = (condition: RawBuilder<unknown>) =>
  sql<number | string>`sum(case when ${condition} then 1 else 0 end)`;

/** Which groups `listGroups` returns: the newest `limit`, or just one. */
export interface GroupFilter {
  limit: number;
  groupId?: string;
  /** Only groups listed after this one, newest first: the runs list's next page. */
  before?: GroupCursor;
}

/** Where a page of the runs list ended: its last group. */
export interface GroupCursor {
  createdAt: number;
  groupId: string;
}

/** Groups of the run index with their counts, newest first. */
export const listGroups = async (db: Db, filter: GroupFilter): Promise<GroupSummary[]> => {
  const rows = await db
    .selectFrom('runs')
    .select((eb) => [
      'groupId',
      eb.fn.countAll<number | string>().as('total'),
      eb.fn.count<number | string>('caseKey').as('cases'),
      countWhen(sql`status = 'QUEUED'`).as('queued'),
      countWhen(sql`status = 'RUNNING'`).as('running'),
      countWhen(sql`outcome = 'passed'`).as('passed'),
      countWhen(sql`outcome = 'failed'`).as('failed'),
      countWhen(sql`outcome = 'error'`).as('error'),
      countWhen(sql`status = 'CANCELED'`).as('canceled'),
      countWhen(sql`status = 'COMPLETED' and outcome is null`).as('completed'),
      countWhen(sql`status = 'FAILED' and outcome is null`).as('failedRuns'),
      eb.fn.min<number | string>('createdAt').as('createdAt'),
      eb.fn.min<number | string | null>('startedAt').as('startedAt'),
      eb.fn.max<number | string | null>('finishedAt').as('finishedAt'),
    ])
    .$if(filter.groupId !== undefined, (q) => q.where('groupId', '=', filter.groupId as string))
    .groupBy('groupId')
    .$if(filter.before !== undefined, (q) => {
      const { createdAt, groupId } = filter.before as GroupCursor;
      return q.having(
        (eb) => sql<boolean>`(${eb.fn.min('createdAt')}, ${eb.ref('groupId')}) < (${createdAt}, ${groupId})`,
      );
    })
    .orderBy('createdAt', 'desc')
    .orderBy('groupId', 'desc')
    .limit(filter.limit)
    .execute();
  if (rows.length === 0) return [];
  const targets = await db
    .selectFrom('runs')
    .select(['groupId', 'target'])
    .distinct()
    .where(
      'groupId',
      'in',
      rows.map((r) => r.groupId),
    )
    .where('target', 'is not', null)
    .execute();
  return rows.map((r) => ({
    groupId: r.groupId,
    kind: Number(r.cases) > 0 ? 'eval' : 'task',
    total: Number(r.total),
    queued: Number(r.queued),
    running: Number(r.running),
    passed: Number(r.passed),
    failed: Number(r.failed),
    error: Number(r.error),
    canceled: Number(r.canceled),
    completed: Number(r.completed),
    failedRuns: Number(r.failedRuns),
    targets: targets
      .filter((t) => t.groupId === r.groupId)
      .map((t) => t.target as string)
      .sort(),
    createdAt: Number(r.createdAt),
    startedAt: num(r.startedAt),
    finishedAt: num(r.finishedAt),
  }));
};

/** A page of a group's case table (latest attempt per key, in commit order) and how many match in all. */
export const queryCases = async (db: Db, groupId: string, query: CaseQuery): Promise<CasePage> => {
  const where = casesWhere(groupId, query);
  const unfiltered = !(query.outcome || query.target || query.evalPath || query.errorKind || query.q);
  const [count, rows] = await Promise.all([
    query.countless
      ? { n: -1 }
      : unfiltered
        ? // Every key has exactly one latest attempt: counting keys reads the key index once instead of probing
          // it for a later attempt of each row (100k cases: ~8 ms instead of ~70 ms).
          db
            .selectFrom('results')
            .select((eb) => eb.fn.count<number | string>('caseKey').distinct().as('n'))
            .where('groupId', '=', groupId)
            .executeTakeFirstOrThrow()
        : db
            .selectFrom('results')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where(where)
            .executeTakeFirstOrThrow(),
    db
      .selectFrom('results')
      .select(['seq', 'runId', 'caseKey', 'attempt', 'target', 'evalPath', 'outcome', 'score', 'errorKind', 'row'])
      .where(where)
      .$if(query.afterKey !== undefined, (q) => q.orderBy('caseKey'))
      .$if(query.afterKey === undefined, (q) => q.orderBy('seq', query.descending ? 'desc' : 'asc'))
      .limit(query.limit)
      .offset(query.offset)
      .execute(),
  ]);
  return {
    total: Number(count.n),
    rows: rows.map((r) => ({ ...r, seq: Number(r.seq), row: JSON.parse(r.row) as JsonObject })),
  };
};

/** The (eval, test, target) cells of a group over its latest attempts, at most `limit`. */
export const caseMatrix = async (db: Db, groupId: string, limit: number): Promise<MatrixCell[]> => {
  // In the order of the results_group_matrix index: the first `limit` cells are read, not every case.
  const rows = await db
    .selectFrom('results')
    .select((eb) => [
      'evalPath',
      'test',
      'target',
      eb.fn.countAll<number | string>().as('total'),
      countWhen(sql`outcome = 'passed'`).as('passed'),
      countWhen(sql`outcome = 'failed'`).as('failed'),
      countWhen(sql`outcome = 'error'`).as('error'),
      eb.fn.avg<number | string | null>('score').as('meanScore'),
    ])
    .where((eb) => eb.and([eb('groupId', '=', groupId), isLatest(eb)]))
    .groupBy(['evalPath', 'test', 'target'])
    .orderBy('evalPath')
    .orderBy('test')
    .orderBy('target')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    evalPath: r.evalPath,
    test: String(r.test),
    target: r.target,
    total: Number(r.total),
    passed: Number(r.passed),
    failed: Number(r.failed),
    error: Number(r.error),
    meanScore: num(r.meanScore),
  }));
};

/** The distinct values a group's case filters can take. */
export interface CaseFacets {
  targets: string[];
  evals: string[];
  errorKinds: string[];
}

export const caseFacets = async (db: Db, groupId: string): Promise<CaseFacets> => {
  // One pass over the covering filter index for all three lists: the combinations are few, the rows many.
  const combos = await db
    .selectFrom('results')
    .select(['target', 'evalPath', 'errorKind'])
    .distinct()
    .where('groupId', '=', groupId)
    .execute();
  const sorted = (values: (string | null)[]): string[] =>
    [...new Set(values.filter((v): v is string => v !== null))].sort();
  return {
    targets: sorted(combos.map((c) => c.target)),
    evals: sorted(combos.map((c) => c.evalPath)),
    errorKinds: sorted(combos.map((c) => c.errorKind)),
  };
};

/** What a group's cases spent in USD: every attempt's target calls and judges' calls, apart. */
export interface GroupCost {
  /** Null when no result carried a price (unpriced models, or nothing committed yet). */
  targetUsd: number | null;
  judgeUsd: number | null;
}

// The costs live in each result's bundle row; each dialect spells JSON extraction its own way.
const costOf = (db: Db, path: 'usage' | 'judge'): RawBuilder<number | string | null> => {
  const pg = isPostgres(db);
  if (path === 'usage')
    return pg
      ? sql`sum((row::jsonb #>> '{usage,cost_usd}')::double precision)`
      : sql`sum(json_extract(row, '$.usage.cost_usd'))`;
  return pg
    ? sql`sum((row::jsonb #>> '{usage,judge,cost_usd}')::double precision)`
    : sql`sum(json_extract(row, '$.usage.judge.cost_usd'))`;
};

export const groupCost = async (db: Db, groupId: string): Promise<GroupCost> => {
  const r = await db
    .selectFrom('results')
    .select([costOf(db, 'usage').as('target'), costOf(db, 'judge').as('judge')])
    .where('groupId', '=', groupId)
    .executeTakeFirst();
  return { targetUsd: num(r?.target ?? null), judgeUsd: num(r?.judge ?? null) };
};
