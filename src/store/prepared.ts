import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import { directRunner } from './direct-sqlite.js';
import { namedText } from './named-statements.js';

/** Runs a prepared query on a connection or a transaction. */
export type PreparedQuery<Args extends unknown[]> = <DB>(
  executor: Kysely<DB>,
  ...args: Args
) => Promise<QueryResult<unknown>>;

/**
 * A query Kysely builds and compiles once. For the statements of a run's life, building and compiling
 * (with the camel-case plugin) cost about four times what SQLite takes to run them; a prepared query only
 * binds new values into the compiled parameters. `build` gets one marker per argument and must pass each
 * marker, untouched, as a bound value. On a connection a direct section holds (direct-sqlite.ts), it runs
 * straight on SQLite's handle; on PostgreSQL it is a named statement (named-statements.ts), which the server
 * parses and plans once per connection, not at each execution (a submit's 40-row insert binds 480 values).
 */
export const prepareQuery = <Args extends unknown[]>(
  arity: Args['length'],
  build: (...args: Args) => Compilable,
): PreparedQuery<Args> => {
  const markers = Array.from({ length: arity }, (_, i) => `\u0000proctor-parameter-${i}\u0000`);
  const built = build(...(markers as unknown as Args)).compile();
  const compiled = { ...built, sql: namedText(built.sql) };
  // By a map, not markers.indexOf: a 40-row insert binds 520 markers of one length, and searching the list for each
  // compared ~135,000 strings, ~2% of a 1,000-case run's instructions (valgrind) for its one chunk of 40.
  const markerSlots = new Map(markers.map((marker, i) => [marker, i]));
  const slots = compiled.parameters.map((p) => markerSlots.get(p as string) ?? -1);
  const bound = new Set(slots);
  for (let i = 0; i < arity; i++) {
    if (!bound.has(i)) throw new Error(`prepared query does not bind argument ${i}: ${compiled.sql}`);
  }
  // Most statements bind exactly their arguments, in order: the arguments are then the parameters, not copied.
  const bindsArgs = slots.length === arity && slots.every((slot, i) => slot === i);
  return (executor, ...args) => {
    const parameters = bindsArgs
      ? args
      : compiled.parameters.map((p, i) => {
          const slot = slots[i] as number;
          return slot >= 0 ? args[slot] : p;
        });
    const direct = directRunner(executor);
    return direct
      ? Promise.resolve(direct(compiled.sql, parameters))
      : executor.executeQuery(CompiledQuery.raw(compiled.sql, parameters));
  };
};
