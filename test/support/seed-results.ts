import BetterSqlite3 from 'better-sqlite3';
import { openSqliteStore } from '../../src/store/sqlite.js';

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
}

const resultFiles = (c: SeedCase): Record<string, string> => ({
  'result.json': JSON.stringify({
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
  }),
});

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
      const evalPath = c.evalPath ?? 'evals/seed.eval.yaml';
      const score = c.score === undefined ? (c.outcome === 'passed' ? 1 : 0) : c.score;
      const error = c.errorKind ? { kind: c.errorKind, message: `seeded ${c.errorKind}`, retryable: false } : null;
      const status = c.outcome === 'canceled' ? 'CANCELED' : c.outcome === 'error' ? 'FAILED' : 'COMPLETED';
      run.run(
        runId,
        groupId,
        `i-${runId}`,
        status,
        c.target,
        c.key,
        c.outcome,
        score,
        c.errorKind ?? null,
        now,
        now,
        now,
      );
      const row = {
        schema: 'proctor.case/1',
        identity: { eval: evalPath, test: c.test, prompt: 'p', target: c.target, sample: 0 },
        key: c.key,
        fingerprint: 'f',
        outcome: c.outcome,
        score,
        error,
        attempts: 1,
        duration_ms: 5,
        usage: { input_tokens: 1, output_tokens: 1, cost_usd: 0 },
        run_id: runId,
        group_id: groupId,
        started_at: new Date(now).toISOString(),
        finished_at: new Date(now).toISOString(),
        artifacts: `cases/${c.key}/${c.attempt ?? 1}`,
      };
      const files = JSON.stringify(resultFiles(c));
      result.run(
        runId,
        groupId,
        c.key,
        c.attempt ?? 1,
        c.target,
        evalPath,
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
