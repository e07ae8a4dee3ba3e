import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { DispatchCandidate, JobRef, QueueLedger } from '../store/queue-ledger.js';
import type { RateLimited } from './runner.js';
import { hold, type InFlight, Scheduler } from './scheduler.js';

/** A job's payload: ids only. Redis keeps it in clear text, so no prompt and no secret ever goes there. */
export interface JobData {
  v: 1;
  runId: string;
}

export const queueName = (pool: string): string => `proctor-${pool}`;

/** Derived from the run (one case attempt) and its dispatch number: a re-send of the same dispatch dedupes. */
export const jobIdOf = (ref: JobRef): string =>
  `r-${createHash('sha256').update(ref.runId).digest('hex').slice(0, 32)}-${ref.dispatches}`;

/**
 * BullMQ retries only what the processor throws (the store out of reach), never a case's outcome; finished
 * jobs are removed, so a job id can be sent again once its job is gone.
 */
const jobOf = (ref: JobRef) => ({
  name: 'case',
  data: { v: 1, runId: ref.runId } satisfies JobData,
  opts: {
    jobId: jobIdOf(ref),
    priority: ref.priority,
    attempts: 3,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: true,
    removeOnFail: true,
  },
});

export const sendJobs = async (queue: Queue, refs: readonly JobRef[]): Promise<void> => {
  const [only] = refs;
  // One job (a commit's handed-off slot, the common case) is one script call; addBulk wraps it in MULTI/EXEC.
  if (refs.length === 1 && only) {
    const job = jobOf(only);
    await queue.add(job.name, job.data, job.opts);
  } else if (refs.length > 0) await queue.addBulk(refs.map(jobOf));
};

/** BullMQ and ioredis, loaded on first use (about 150 ms of CPU): a command that never queues loads neither. */
export const loadQueueClient = () => import('./queue-client.js');

/** A Redis connection as BullMQ needs it: commands wait through a reconnect instead of failing. */
export const connectRedis = async (url: string): Promise<Redis> => {
  const { Redis } = await loadQueueClient();
  const redis = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
  // Reported through `status` (the worker's watchdog reads it); unheard, an 'error' event kills the process.
  redis.on('error', () => {});
  return redis;
};

export const openQueue = async (pool: string, redis: Redis): Promise<Queue> => {
  const { Queue } = await loadQueueClient();
  const queue = new Queue(queueName(pool), { connection: redis });
  queue.on('error', () => {});
  return queue;
};

/**
 * The runs to send now, chosen by the same Scheduler as the local runner's, with every limit's count taken
 * from what is dispatched or running across the fleet.
 */
const pickRuns = (waiting: DispatchCandidate[], held: DispatchCandidate['limits'][]): DispatchCandidate[] => {
  const inFlight: InFlight = new Map();
  for (const limits of held) hold(limits, inFlight, 1);
  const scheduler = new Scheduler<DispatchCandidate>(inFlight);
  for (const candidate of waiting) scheduler.add(candidate);
  const picked: DispatchCandidate[] = [];
  for (let next = scheduler.take(); next; next = scheduler.take()) picked.push(next);
  return picked;
};

/** How many waiting runs of each group a dispatch considers: enough to fill any limit, and a bounded read. */
const dispatchWindow = 200;

/**
 * Marks what may start now dispatched and sends its jobs; any submitter or worker may call it at any time.
 * Returns how many it sent.
 */
export const dispatch = async (ledger: QueueLedger, queue: Queue, pool: string): Promise<number> => {
  const refs = await ledger.dispatch(pool, Date.now(), dispatchWindow, pickRuns);
  await sendJobs(queue, refs);
  return refs.length;
};

/** One hash per pool: target label → until when (epoch ms) a worker holds its calls back after a 429. */
const rateLimitKey = (pool: string): string => `proctor:rl:${pool}`;

/** How long a pool's pauses are kept after the last was published: readers skip those whose time has passed. */
const rateLimitKeepMs = 3_600_000;

/**
 * A worker's gates that are holding calls back, published for the submitter's progress display. Only labels
 * and times: nothing of a request goes to Redis.
 */
export const publishRateLimits = async (redis: Redis, pool: string, limited: readonly RateLimited[]): Promise<void> => {
  if (limited.length === 0) return;
  const key = rateLimitKey(pool);
  await redis
    .multi()
    .hset(key, Object.fromEntries(limited.map((l) => [l.label, String(l.until)])))
    .pexpire(key, rateLimitKeepMs)
    .exec();
};

/** The targets some worker of the pool holds back now; a field whose time has passed is stale. */
export const readRateLimits = async (redis: Redis, pool: string, now: number): Promise<RateLimited[]> => {
  const fields = await redis.hgetall(rateLimitKey(pool));
  return Object.entries(fields)
    .map(([label, until]) => ({ label, until: Number(until) }))
    .filter((l) => l.until > now);
};
