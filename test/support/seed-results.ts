import BetterSqlite3 from 'better-sqlite3';
import type { JsonObject } from '../../src/records.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';

/** A committed case to seed: enough of a bundle row and a result.json for every explorer page. */
export interface SeedCase {
  key: string;
  test: string;
  target: string;
  outcome: 'passed' | 'failed' | 'error' | 'canceled';
  evalPath?: string;
  score?: number | null;
  attempt?: number;
  output?: string;
  transcript?: { role: string; content: string }[];
  errorKind?: string;
  /** The target's spend (default 0) and the judges' (no judge when absent). */
  costUsd?: number | null;
  judgeCostUsd?: number;
  /** Keep only this many characters of result.json, then the marker line the store's cap writes. */
  cutResultAt?: number;
}

const resultJson = (c: SeedCase): string =>
  JSON.stringify({
    outcome: c.outcome,
    output: c.output ?? `output of ${c.test}`,
    steps: [
      {
        stepId: 'ask',
        status: 'completed',
        attempts: 1,
        error: null,
        output: { text: c.output ?? '', transcript: c.transcript ?? [{ role: 'user', content: `ask ${c.test}` }] },
      },
      {
        stepId: 'verify',
        status: 'completed',
        attempts: 1,
        error: null,
        output: { results: [{ id: 'equals', pass: c.outcome === 'passed', score: c.score ?? null, reason: 'seeded' }] },
      },
    ],
  });

const resultFiles = (c: SeedCase): Record<string, string> => {
  const text = resultJson(c);
  return {
    'result.json':
      c.cutResultAt === undefined
        ? text
        : `${text.slice(0, c.cutResultAt)}\n[proctor: truncated: ${text.length} bytes, the first ${c.cutResultAt} kept]\n`,
  };
};

const statusOf = (c: SeedCase) =>
  c.outcome === 'canceled' ? 'CANCELED' : c.outcome === 'error' ? 'FAILED' : ('COMPLETED' as const);

const evalPathOf = (c: SeedCase): string => c.evalPath ?? 'evals/seed.eval.yaml';

/** The bundle row of a seeded case, as the engine writes it. */
const rowOf = (c: SeedCase, runId: string, groupId: string, now: number) => {
  const score = c.score === undefined ? (c.outcome === 'passed' ? 1 : 0) : c.score;
  return {
    schema: 'proctor.case/1',
    identity: { eval: evalPathOf(c), test: c.test, prompt: 'p', target: c.target, sample: 0 },
    key: c.key,
    fingerprint: 'f',
    outcome: c.outcome,
    score,
    error: c.errorKind ? { kind: c.errorKind, message: `seeded ${c.errorKind}`, retryable: false } : null,
    attempts: 1,
    duration_ms: 5,
    usage: {
      input_tokens: 1,
      output_tokens: 1,
      cost_usd: c.costUsd === undefined ? 0 : c.costUsd,
      ...(c.judgeCostUsd === undefined
        ? {}
        : { judge: { input_tokens: 1, output_tokens: 1, cost_usd: c.judgeCostUsd } }),
    },
    run_id: runId,
    group_id: groupId,
    started_at: new Date(now).toISOString(),
    finished_at: new Date(now).toISOString(),
    artifacts: `cases/${c.key}/${c.attempt ?? 1}`,
  };
};

/** Commits cases through the Store API, as the engine does: a run each, finished with its result. */
export const commitCases = async (store: Store, groupId: string, cases: readonly SeedCase[], prefix: string) => {
  const runIds = cases.map((_, i) => `${prefix}-${i}`);
  await store.createRuns(
    cases.map((c, i) => ({
      runId: runIds[i] as string,
      groupId,
      target: c.target,
      caseKey: c.key,
      taskId: 'eval',
      instanceId: `i-${runIds[i]}`,
      metadata: {},
      spec: {},
      context: {},
    })),
  );
  for (const [i, c] of cases.entries()) {
    const runId = runIds[i] as string;
    const row = rowOf(c, runId, groupId, Date.now());
    await store.finishRun(
      runId,
      {
        status: statusOf(c),
        outcome: c.outcome,
        ...(row.score === null ? {} : { score: row.score }),
        result: {
          caseKey: c.key,
          attempt: c.attempt ?? 1,
          target: c.target,
          evalPath: row.identity.eval,
          row: row as unknown as JsonObject,
          files: resultFiles(c),
        },
      },
      Date.now(),
    );
  }
};

/**
 * Seeds one eval run of committed cases into a SQLite store file in one transaction (100k in a few seconds):
 * a run row and a results row per case, as the engine commits them.
 */
export const seedGroup = async (file: string, groupId: string, cases: Iterable<SeedCase>): Promise<void> => {
  await (await openSqliteStore(file)).close();
  const db = new BetterSqlite3(file);
  const run = db.prepare(
    `insert into runs (run_id, group_id, task_id, instance_id, status, target, case_key, outcome, score, error_kind,
       metadata, created_at, started_at, finished_at) values (?, ?, 'eval', ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?)`,
  );
  const result = db.prepare(
    `insert into results (run_id, group_id, case_key, attempt, target, eval_path, outcome, score, error_kind, row,
       files, committed_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const now = Date.now();
  db.transaction(() => {
    let i = 0;
    for (const c of cases) {
      const runId = `${groupId}-${i++}`;
      const row = rowOf(c, runId, groupId, now);
      const { score } = row;
      run.run(
        runId,
        groupId,
        `i-${runId}`,
        statusOf(c),
        c.target,
        c.key,
        c.outcome,
        score,
        c.errorKind ?? null,
        now,
        now,
        now,
      );
      const files = JSON.stringify(resultFiles(c));
      result.run(
        runId,
        groupId,
        c.key,
        c.attempt ?? 1,
        c.target,
        row.identity.eval,
        c.outcome,
        score,
        c.errorKind ?? null,
        JSON.stringify(row),
        files,
        now,
      );
    }
  })();
  db.close();
};

/** `n` cases over two targets: every 7th failed, every 50th an error (timeout), the rest passed. */
export function* manyCases(n: number): Generator<SeedCase> {
  for (let i = 0; i < n; i++) {
    const outcome = i % 50 === 0 ? 'error' : i % 7 === 0 ? 'failed' : 'passed';
    yield {
      key: `k${String(i).padStart(6, '0')}`,
      test: `t${Math.floor(i / 2)}`,
      target: i % 2 ? 'beta' : 'alpha',
      outcome,
      ...(outcome === 'error' ? { errorKind: 'timeout' } : {}),
      output: i === 4242 ? 'the needle-4242 answer' : `answer ${i}`,
    };
  }
}
