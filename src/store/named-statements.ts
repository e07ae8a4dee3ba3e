import { createHash } from 'node:crypto';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { ProctorError } from '../errors.js';

const mark = '/* named */';

/**
 * `text` marked to be prepared by PostgreSQL once per connection: parsed once, and after five executions planned
 * once (its generic plan). Planning a queue commit's statement cost PostgreSQL about as much as executing it.
 * Only for hot statements whose text is fixed, every value a parameter (prepared.ts marks its statements): each
 * text stays prepared on each connection.
 */
export const namedText = (text: string): string => `${mark} ${text}`;

const names = new Map<string, string>();

/** The statement name of a marked text; undefined for any other. */
const nameOf = (text: string): string | undefined => {
  if (!text.startsWith(mark)) return undefined;
  let name = names.get(text);
  if (name === undefined) {
    name = `proctor_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
};

/** A pooled connection as Kysely uses it, with marked statements executed by name (prepared once per connection). */
class PreparingClient implements PostgresPoolClient {
  constructor(private readonly client: pg.PoolClient) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    statement: string | PostgresCursor<R>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Kysely passes a cursor only to stream, with a cursor class configured: the store configures none.
    if (typeof statement !== 'string') throw new ProctorError('internal', 'the store streams no query');
    const name = nameOf(statement);
    return this.client
      .query<R & pg.QueryResultRow>({ text: statement, values: [...parameters], ...(name ? { name } : {}) })
      .then((r) => ({
        command: r.command as PostgresQueryResult<R>['command'],
        rowCount: r.rowCount ?? 0,
        rows: r.rows,
      }));
  }

  release(destroy?: boolean): void {
    this.client.release(destroy);
  }
}

/** `pool` as Kysely's PostgreSQL dialect takes it, running the statements marked `named` by name. */
export const preparingPool = (pool: pg.Pool): PostgresPool => ({
  connect: async () => new PreparingClient(await pool.connect()),
  end: () => pool.end(),
});
