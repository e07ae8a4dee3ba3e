import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type CliProcess, startCli, waitFor } from './cli.js';
import { type TempProject, tempProject } from './project.js';
import type { StoreBackend } from './store-backends.js';

/** Whether `redis-server` can be started here (tests that own a Redis need it). */
export const hasRedisServer = (() => {
  try {
    execFileSync('redis-server', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

/** The Redis the machines run; PROCTOR_TEST_REDIS_URL points elsewhere. */
export const redisUrl = process.env.PROCTOR_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Why Redis cannot be used here, or undefined when it answers. */
export const redisProblem = async (url = redisUrl): Promise<string | undefined> => {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return `Redis is not reachable at ${url}: ${(error as Error).message}`;
  } finally {
    redis.disconnect();
  }
};

export interface QueueProjectOptions {
  storeUrl: string;
  redis?: string;
  /** Short so failover happens in seconds. */
  lockMs?: number;
  stalledIntervalMs?: number;
  files?: Record<string, string>;
}

/** A project whose runner is the queue on a pool of its own, so tests never see each other's jobs. */
export const queueProject = (options: QueueProjectOptions): TempProject & { pool: string } => {
  const pool = `t${randomBytes(5).toString('hex')}`;
  const project = tempProject({
    'proctor.toml': `[store]
url = "${options.storeUrl}"
[runner]
kind = "queue"
[runner.config]
redis = "${options.redis ?? redisUrl}"
pool = "${pool}"
lock_ms = ${options.lockMs ?? 3000}
stalled_interval_ms = ${options.stalledIntervalMs ?? 1000}
redis_down_exit_ms = 5000
`,
    ...options.files,
  });
  return Object.assign(project, { pool });
};

/** A `proctor worker` child process (of the install whose bin is `cli`), started and listening once this resolves. */
export const startWorker = async (
  project: TempProject,
  args: readonly string[] = [],
  env: Record<string, string | undefined> = {},
  cli?: string,
): Promise<CliProcess> => {
  const worker = startCli(['worker', ...args], { cwd: project.dir, env, timeoutMs: 120_000, ...(cli ? { cli } : {}) });
  await waitFor(() => worker.stderr().includes('worker on pool') || worker.child.exitCode !== null);
  return worker;
};

/** A queue project as withQueueFleet makes it: its eval files, and more proctor.toml (targets, pricing). */
export interface FleetProject {
  files: Record<string, string>;
  toml?: string;
  workerArgs?: readonly string[];
}

/**
 * Runs `fn` with a queue project on a fresh database of `backend` (PostgreSQL) and one `proctor worker` serving
 * it; the worker, the project and the database are gone afterwards.
 */
export const withQueueFleet = async (
  backend: StoreBackend,
  options: FleetProject,
  fn: (project: TempProject & { pool: string }) => Promise<void>,
): Promise<void> => {
  const db = await backend.create();
  const project = queueProject({ storeUrl: db.url, files: options.files });
  project.write('proctor.toml', `${project.read('proctor.toml')}${options.toml ?? ''}`);
  const worker = await startWorker(project, options.workerArgs);
  try {
    await fn(project);
  } finally {
    worker.child.kill('SIGKILL');
    project.remove();
    await db.remove();
  }
};

/** A `redis-server` this test owns, on a free port, that it can stop and start again on the same data dir. */
export interface OwnedRedis {
  url: string;
  start(): Promise<void>;
  /** Shuts the server down (with AOF, writing it first). */
  stop(): Promise<void>;
  remove(): Promise<void>;
}

const freePort = async (): Promise<number> => {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
};

/** `evictionPolicy`: its `maxmemory-policy`, `noeviction` (what BullMQ needs) unless a test wants another. */
export const startOwnedRedis = async (
  persistence: 'aof' | 'none',
  evictionPolicy = 'noeviction',
): Promise<OwnedRedis> => {
  const { spawn } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const dir = mkdtempSync(path.join(tmpdir(), 'proctor-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--maxmemory-policy',
    evictionPolicy,
    ...(persistence === 'aof' ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
  ];
  let child: ReturnType<typeof spawn> | undefined;
  const owned: OwnedRedis = {
    url,
    start: async () => {
      child = spawn('redis-server', args, { stdio: 'ignore' });
      const until = Date.now() + 10_000;
      while ((await redisProblem(url)) !== undefined) {
        if (Date.now() > until) throw new Error(`redis-server on ${port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: async () => {
      const running = child;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((r) => running.once('exit', r));
      running.kill('SIGTERM');
      await exited;
    },
    remove: async () => {
      await owned.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await owned.start();
  return owned;
};
