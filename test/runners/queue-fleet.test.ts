// The queue runner end to end: `eval run` as the follower, `proctor worker` child processes, real Redis and
// PostgreSQL, the fake model over HTTP. Leases and stalled checks are a few seconds so failover is quick.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, runCli, startCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { queueProject, redisProblem, startWorker } from '../support/queue-fleet.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');
const unavailable = postgres?.unavailable ?? (await redisProblem());

interface Row {
  key: string;
  outcome: string;
}

describe.skipIf(unavailable !== undefined)(`queue runner across worker processes ${unavailable ?? ''}`, () => {
  let server: FakeModelServer;
  let db: BackendStore;
  const workers: CliProcess[] = [];

  beforeAll(async () => {
    server = await startFakeModelServer({ modelLatencyMs: { a: 300, b: 300 } });
    db = await (postgres as NonNullable<typeof postgres>).create();
  });
  afterAll(async () => {
    await server.close();
    await db.remove();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) w.child.kill('SIGKILL');
  });

  const target = (model: string, extra = '') =>
    `  - { label: ${model}, kind: openai, base_url: "${server.url}", model: ${model}, api_key: k${extra} }`;
  const evalFile = (targets: string[], tests: string[]) => `
targets:
${targets.join('\n')}
prompts: ["{{ q }}"]
default_test:
  assert: [{ type: contains, value: echo }]
tests:
${tests.map((q, i) => `  - { id: t${i}, vars: { q: "${q}" } }`).join('\n')}
`;
  const fleet = async (project: Parameters<typeof startWorker>[0], n: number, args: string[] = []) => {
    const started = await Promise.all(Array.from({ length: n }, () => startWorker(project, args)));
    workers.push(...started);
    return started;
  };
  const rows = (text: string): Row[] =>
    text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
  const query = async <T>(sql: string): Promise<T[]> => {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  };

  it('holds the global and per-target caps across 3 workers, each case executed once, the bundle whole', async () => {
    server.reset();
    const tag = `caps${Date.now()}`;
    const project = queueProject({
      storeUrl: db.url,
      files: {
        'a.eval.yaml': evalFile(
          [target('a'), target('b', ', max_concurrency: 2')],
          Array.from({ length: 10 }, (_, i) => `${tag}-${i}`),
        ),
      },
    });
    await fleet(project, 3, ['--concurrency', '4']);
    const run = await runCli(['eval', 'run', '-j', '5', '-o', 'out'], { cwd: project.dir, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(server.peakInFlight).toBe(5);
    expect(server.peakInFlightFor('b')).toBe(2);
    expect(server.countFor(tag)).toBe(20);
    const bundle = rows(project.read('out/index.jsonl'));
    expect(bundle).toHaveLength(20);
    expect(new Set(bundle.map((r) => r.key)).size).toBe(20);
    expect(JSON.parse(project.read('out/summary.json')).counts).toMatchObject({ total: 20, passed: 20 });
    const executions = await query<{ executions: number; superseded: number }>(
      `select executions, superseded from queue_runs where pool = '${project.pool}'`,
    );
    expect(executions).toHaveLength(20);
    expect(executions.every((e) => e.executions === 1 && e.superseded === 0)).toBe(true);
  });
});
