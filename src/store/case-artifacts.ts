import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { JsonObject } from '../records.js';
import { isPostgres } from './explorer-reads.js';
import type { Database } from './schema.js';

/** An artifact file's name and size in characters, from a result's manifest (its `files`). */
export interface ArtifactEntry {
  name: string;
  size: number;
}

/** The first characters of one artifact file, and how long the whole is. */
export interface ArtifactHead {
  text: string;
  length: number;
}

/** A committed attempt as the case page starts from it: its row, its manifest and the head of its result.json. */
export interface AttemptHead {
  seq: number;
  runId: string;
  attempt: number;
  row: JsonObject;
  artifacts: ArtifactEntry[];
  /** The first characters of `result.json`, when the attempt has one. */
  result: ArtifactHead | null;
}

type Db = Kysely<Database>;

/**
 * The (name, text) pairs of a result's `files`, expanded by the database: only what a query keeps of them
 * (a length, a prefix) reaches this process, never a whole 8 MB file. A file written as a JSON value
 * (files-column.ts) is its text as written: PostgreSQL's `json`, unlike `jsonb`, keeps that text.
 */
const filesOf = (db: Db): RawBuilder<unknown> =>
  isPostgres(db) ? sql`json_each_text(results.files::json)` : sql`json_each(results.files)`;

const manifestOf = (db: Db): RawBuilder<string | null> =>
  isPostgres(db)
    ? sql`(select json_agg(json_build_array(key, length(value)) order by key)::text from ${filesOf(db)})`
    : sql`(select json_group_array(json_array(key, length(value))) from (select key, value from ${filesOf(db)} order by key))`;

const head = (db: Db, name: string, chars: number) => ({
  text: sql<string | null>`(select substr(value, 1, ${chars}) from ${filesOf(db)} where key = ${name})`,
  length: sql<number | string | null>`(select length(value) from ${filesOf(db)} where key = ${name})`,
});

/** Every committed attempt of one case of a group, oldest first, with `chars` of each one's result.json. */
export const caseAttemptHeads = async (
  db: Db,
  groupId: string,
  caseKey: string,
  chars: number,
): Promise<AttemptHead[]> => {
  const result = head(db, 'result.json', chars);
  const rows = await db
    .selectFrom('results')
    .select([
      'seq',
      'runId',
      'attempt',
      'row',
      manifestOf(db).as('manifest'),
      result.text.as('resultText'),
      result.length.as('resultLength'),
    ])
    .where('groupId', '=', groupId)
    .where('caseKey', '=', caseKey)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    seq: Number(r.seq),
    runId: r.runId,
    attempt: r.attempt,
    row: JSON.parse(r.row) as JsonObject,
    artifacts: (JSON.parse(r.manifest ?? '[]') as [string, number][]).map(([name, size]) => ({ name, size })),
    result: r.resultText === null ? null : { text: r.resultText, length: Number(r.resultLength) },
  }));
};

/** The first `chars` of a result's artifact `name` (all of it without `chars`); undefined when there is none. */
export const artifactHead = async (
  db: Db,
  seq: number,
  name: string,
  chars?: number,
): Promise<ArtifactHead | undefined> => {
  const file = head(db, name, chars ?? 2 ** 31 - 1);
  const row = await db
    .selectFrom('results')
    .select([file.text.as('text'), file.length.as('length')])
    .where('seq', '=', seq)
    .executeTakeFirst();
  return row && row.text !== null ? { text: row.text, length: Number(row.length) } : undefined;
};

/** One step of a committed result.json as the database reads it: its record, and a verifier's grader results. */
export interface ResultStep {
  stepId: string;
  status: string;
  attempts: number;
  /** A verify step's output's `results`. */
  results?: unknown[];
}

/** PostgreSQL's refusal of a text that is not JSON (22P02), or of steps that are not a list (22023). */
const notJson = (error: unknown): boolean => ['22P02', '22023'].includes(String((error as { code?: unknown }).code));

/**
 * The steps a run's committed result.json records, read in the database: only each step's record and a verify
 * step's results leave it, never a 10 MB transcript. None when the run has no result, or a result.json that is not
 * JSON whole (cut at the cap).
 */
export const resultSteps = async (db: Db, runId: string): Promise<ResultStep[]> => {
  const query = isPostgres(db)
    ? sql<{ step: string; status: string; attempts: string; results: string | null }>`
        select s ->> 'stepId' as step, s ->> 'status' as status, s ->> 'attempts' as attempts,
               (s -> 'output' -> 'results')::text as results
          from results r, json_array_elements(((r.files::json) ->> 'result.json')::json -> 'steps') with ordinality e(s, n)
         where r.run_id = ${runId} order by n`
    : sql<{ step: string; status: string; attempts: number; results: string | null }>`
        select json_extract(s.value, '$.stepId') as step, json_extract(s.value, '$.status') as status,
               json_extract(s.value, '$.attempts') as attempts, json_extract(s.value, '$.output.results') as results
          from results r, json_each(json_extract(r.files, '$."result.json"'), '$.steps') s
         where r.run_id = ${runId} and json_valid(json_extract(r.files, '$."result.json"')) order by s.key`;
  let rows: { step: string; status: string; attempts: number | string; results: string | null }[];
  try {
    rows = (await query.execute(db)).rows;
  } catch (error) {
    if (notJson(error)) return [];
    throw error;
  }
  return rows.map((r) => {
    const results: unknown = r.results === null ? undefined : JSON.parse(r.results);
    return {
      stepId: String(r.step),
      status: String(r.status),
      attempts: Number(r.attempts),
      ...(Array.isArray(results) ? { results } : {}),
    };
  });
};

/** A journal entry as the explorer shows it: the heads of its ops' and output's JSON texts, and their lengths. */
export interface JournalHead {
  seq: number;
  stepId: string;
  attempt: number;
  createdAt: number;
  ops: ArtifactHead;
  output: ArtifactHead;
}

/**
 * An instance's journal, oldest first, with `chars` of each entry's ops and output: a prompt step's entry holds
 * the whole transcript (10 MB can be), of which only the head leaves the database.
 */
export const journalHeads = async (db: Db, instanceId: string, chars: number): Promise<JournalHead[]> => {
  const rows = await db
    .selectFrom('journal')
    .select([
      'seq',
      'stepId',
      'attempt',
      'createdAt',
      sql<string>`substr(ops, 1, ${chars})`.as('opsText'),
      sql<number | string>`length(ops)`.as('opsLength'),
      sql<string>`substr(output, 1, ${chars})`.as('outputText'),
      sql<number | string>`length(output)`.as('outputLength'),
    ])
    .where('instanceId', '=', instanceId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    seq: r.seq,
    stepId: r.stepId,
    attempt: r.attempt,
    createdAt: Number(r.createdAt),
    ops: { text: r.opsText, length: Number(r.opsLength) },
    output: { text: r.outputText, length: Number(r.outputLength) },
  }));
};
