import { randomBytes } from 'node:crypto';
import { type CliProcess, startCli, waitFor } from './cli.js';
import { type TempProject, tempProject } from './project.js';

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

/** A `proctor worker` child process, started and listening once this resolves. */
export const startWorker = async (
  project: TempProject,
  args: readonly string[] = [],
  env: Record<string, string | undefined> = {},
): Promise<CliProcess> => {
  const worker = startCli(['worker', ...args], { cwd: project.dir, env, timeoutMs: 120_000 });
  await waitFor(() => worker.stderr().includes('worker on pool') || worker.child.exitCode !== null);
  return worker;
};
