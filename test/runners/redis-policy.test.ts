// A Redis that may evict keys can lose queued jobs: the worker and the submitter say so, on a redis-server
// this test owns (the machine's own Redis keeps its policy).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, waitFor } from '../support/cli.js';
import { hasRedisServer, type OwnedRedis, queueProject, startOwnedRedis, startWorker } from '../support/queue-fleet.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');
const unavailable = postgres?.unavailable ?? (hasRedisServer ? undefined : 'redis-server is not installed');
const warning = 'has maxmemory-policy allkeys-lru: under memory pressure it may evict queued jobs';

describe.skipIf(unavailable !== undefined)(`Redis eviction policy ${unavailable ?? ''}`, () => {
  let db: BackendStore;
  let redis: OwnedRedis;

  beforeAll(async () => {
    db = await (postgres as NonNullable<typeof postgres>).create();
    redis = await startOwnedRedis('none', 'allkeys-lru');
  });
  afterAll(async () => {
    await redis?.remove();
    await db?.remove();
  });

  it('warns at worker start and at submit unless it is noeviction', async () => {
    const project = queueProject({
      storeUrl: db.url,
      redis: redis.url,
      files: { 'a.eval.yaml': 'targets: [{ kind: echo }]\nprompts: ["{{ q }}"]\ntests: [{ vars: { q: hi } }]\n' },
    });
    const worker = await startWorker(project);
    try {
      await waitFor(() => worker.stderr().includes('warning: '));
      expect(worker.stderr()).toContain(`warning: Redis at ${redis.url} ${warning}`);
      expect(worker.stderr()).toContain('set maxmemory-policy noeviction');
      const submitted = await runCli(['eval', 'run', '--detach'], { cwd: project.dir });
      expect(submitted.code, submitted.stderr).toBe(0);
      expect(submitted.stderr).toContain(warning);

      const { Redis } = await import('ioredis');
      const admin = new Redis(redis.url);
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      admin.disconnect();
      const again = await runCli(['eval', 'run', '--detach', '-o', 'second'], { cwd: project.dir });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).not.toContain('maxmemory-policy');
    } finally {
      worker.child.kill('SIGKILL');
    }
  });
});
