import type { Kysely } from 'kysely';
import { prepareQuery } from './prepared.js';
import type { Database } from './schema.js';
import type { NewRun } from './store.js';

// SQLite caps bound parameters per statement; 13 columns × 40 rows stays far below it.
const chunkRows = 40;

type Row = (string | number | null)[];

const instanceRow = (r: NewRun, now: number): Row => [
  r.instanceId,
  r.taskId,
  JSON.stringify(r.spec),
  JSON.stringify(r.context),
  r.startStep ?? null,
  now,
];

const runRow = (r: NewRun, now: number): Row => [
  r.runId,
  r.groupId,
  r.taskId,
  r.instanceId,
  r.target ?? null,
  r.caseKey ?? null,
  JSON.stringify(r.metadata),
  r.owner?.host ?? null,
  r.owner?.pid ?? null,
  r.owner?.startedAt ?? null,
  r.owner ? now : null,
  now,
];

const queueRow = (r: NewRun, now: number): Row => [
  r.runId,
  r.groupId,
  r.queue?.pool ?? '',
  JSON.stringify(r.queue?.limits ?? []),
  JSON.stringify(r.queue?.work ?? {}),
  now,
];

const instanceWidth = 6;
const runWidth = 12;
const queueWidth = 6;

/** `args` cut into rows of `width` values. */
const rowsOf = <T>(args: T[], width: number): T[][] =>
  Array.from({ length: args.length / width }, (_, i) => args.slice(i * width, (i + 1) * width));

/**
 * The instances, runs and queue rows inserts of `rows` rows, prepared (prepared.ts): submitting a run's cases builds the same
 * few statements chunk after chunk, and building them (a value node per column per row) cost about as much as
 * SQLite's inserting. `again` keeps rows already there (a retry after a lost connection).
 */
const prepareInserts = (db: Kysely<Database>, rows: number, again: boolean) => ({
  instances: prepareQuery<Row>(rows * instanceWidth, (...args) =>
    db
      .insertInto('instances')
      .values(
        rowsOf(args, instanceWidth).map(([instanceId, taskId, spec, context, startStep, createdAt]) => ({
          instanceId: instanceId as string,
          taskId: taskId as string,
          spec: spec as string,
          context: context as string,
          startStep: startStep as string | null,
          createdAt: createdAt as number,
        })),
      )
      .$if(again, (q) => q.onConflict((oc) => oc.column('instanceId').doNothing())),
  ),
  runs: prepareQuery<Row>(rows * runWidth, (...args) =>
    db
      .insertInto('runs')
      .values(
        rowsOf(args, runWidth).map(
          ([
            runId,
            groupId,
            taskId,
            instanceId,
            target,
            caseKey,
            metadata,
            ownerHost,
            ownerPid,
            ownerStartedAt,
            seenAt,
            createdAt,
          ]) => ({
            runId: runId as string,
            groupId: groupId as string,
            taskId: taskId as string,
            instanceId: instanceId as string,
            status: 'QUEUED',
            target: target as string | null,
            caseKey: caseKey as string | null,
            metadata: metadata as string,
            ownerHost: ownerHost as string | null,
            ownerPid: ownerPid as number | null,
            ownerStartedAt: ownerStartedAt as number | null,
            seenAt: seenAt as number | null,
            createdAt: createdAt as number,
          }),
        ),
      )
      .$if(again, (q) => q.onConflict((oc) => oc.column('runId').doNothing())),
  ),
  queued: prepareQuery<Row>(rows * queueWidth, (...args) =>
    db
      .insertInto('queueRuns')
      .values(
        rowsOf(args, queueWidth).map(([runId, groupId, pool, limits, work, createdAt]) => ({
          runId: runId as string,
          groupId: groupId as string,
          pool: pool as string,
          limits: limits as string,
          work: work as string,
          createdAt: createdAt as number,
        })),
      )
      .$if(again, (q) => q.onConflict((oc) => oc.column('runId').doNothing())),
  ),
});

type Inserts = ReturnType<typeof prepareInserts>;

/** Inserts new runs with their instances, their queue rows too, in chunks; the caller's transaction holds them. */
export class RunInserts {
  // By chunk size and retry: a submission's full chunks and its last, shorter one.
  private readonly prepared = new Map<string, Inserts>();

  constructor(private readonly db: Kysely<Database>) {}

  async insert(trx: Kysely<Database>, runs: readonly NewRun[], now: number, again: boolean): Promise<void> {
    for (let i = 0; i < runs.length; i += chunkRows) {
      const chunk = runs.slice(i, i + chunkRows);
      const inserts = this.inserts(chunk.length, again);
      await inserts.instances(trx, ...chunk.flatMap((r) => instanceRow(r, now)));
      await inserts.runs(trx, ...chunk.flatMap((r) => runRow(r, now)));
      const queued = chunk.filter((r) => r.queue);
      if (queued.length > 0)
        await this.inserts(queued.length, again).queued(trx, ...queued.flatMap((r) => queueRow(r, now)));
    }
  }

  private inserts(rows: number, again: boolean): Inserts {
    const key = `${rows}:${again}`;
    let inserts = this.prepared.get(key);
    if (!inserts) {
      inserts = prepareInserts(this.db, rows, again);
      this.prepared.set(key, inserts);
    }
    return inserts;
  }
}
