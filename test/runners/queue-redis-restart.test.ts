// Redis restarted under a running fleet, on a redis-server this test owns: with AOF the queue survives; without
// persistence it comes back empty and the workers' reconciler sends again what the store says is dispatched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, startCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { hasRedisServer, queueProject, redisProblem, startOwnedRedis, startWorker } from '../support/queue-fleet.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');
const unavailable =
  postgres?.unavailable ?? (await redisProblem()) ?? (hasRedisServer ? undefined : 'redis-server is not installed');

describe.skipIf(unavailable !== undefined)(`queue runner through a Redis restart ${unavailable ?? ''}`, () => {
  let server: FakeModelServer;
  let db: BackendStore;

  beforeAll(async () => {
    server = await startFakeModelServer({ latencyMs: 400 });
    db = await (postgres as NonNullable<typeof postgres>).create();
  });
  afterAll(async () => {
    await server.close();
    await db.remove();
  });

  for (const persistence of ['aof', 'none'] as const) {
    it(`completes the run with nothing missing (${persistence === 'aof' ? 'AOF' : 'no persistence'})`, async () => {
      const redis = await startOwnedRedis(persistence);
      const workers: CliProcess[] = [];
      try {
        const tag = `restart-${persistence}-${Date.now()}`;
        const cases = 16;
        const project = queueProject({
          storeUrl: db.url,
          redis: redis.url,
          files: {
            'a.eval.yaml': `
targets: [{ label: a, kind: openai, base_url: "${server.url}", model: a, api_key: k }]
prompts: ["{{ q }}"]
default_test: { assert: [{ type: contains, value: echo }] }
tests:
${Array.from({ length: cases }, (_, i) => `  - { id: t${i}, vars: { q: "${tag}-${i}" } }`).join('\n')}
`,
          },
        });
        workers.push(...(await Promise.all([startWorker(project), startWorker(project)])));
        const follower = startCli(['eval', 'run', '-j', '4', '-o', 'out'], { cwd: project.dir, timeoutMs: 90_000 });
        await eventually(async () => (server.countFor(tag) >= 3 ? true : undefined));
        await redis.stop();
        await new Promise((r) => setTimeout(r, 3000));
        await redis.start();
        const result = await follower.done;
        expect(result.code, result.stderr).toBe(0);
        const keys = project
          .read('out/index.jsonl')
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { key: string; outcome: string }).key);
        expect(new Set(keys).size).toBe(cases);
        expect(JSON.parse(project.read('out/summary.json')).counts).toMatchObject({ total: cases, passed: cases });
        for (const w of workers) expect(w.child.exitCode).toBeNull();
      } finally {
        for (const w of workers) w.child.kill('SIGKILL');
        await redis.remove();
      }
    });
  }

  it('exits non-zero when its Redis does not come back, so a supervisor restarts it', async () => {
    const redis = await startOwnedRedis('none');
    try {
      const project = queueProject({ storeUrl: db.url, redis: redis.url });
      const worker = await startWorker(project);
      await redis.stop();
      const exited = await worker.done;
      // redis_down_exit_ms is 5 s in test projects.
      expect(exited.code).toBe(1);
      expect(exited.stderr).toContain(`lost the connection to Redis at ${redis.url}`);
    } finally {
      await redis.remove();
    }
  });
});
