import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { runSecrets, storedRequest } from '../engine/redact.js';
import { instanceIdFor } from '../ids.js';
import { once } from '../once.js';
import type { JsonObject } from '../records.js';
import { sleep } from '../sleep.js';
import { isTerminal, type RunRecord, type Store } from '../store/store.js';
import type { RunnerKindDef } from './kind.js';
import { connectRedis, dispatch, loadQueueClient, openQueue, readRateLimits } from './queue-jobs.js';
import { queuedRequest } from './queue-request.js';
import { evictionWarning } from './redis-policy.js';
import type { RateLimited, Runner, SubmitRequest, Submitted } from './runner.js';

const queueConfig = once(() =>
  z
    .strictObject({
      redis: z.string().min(1).default('redis://127.0.0.1:6379'),
      pool: z
        .string()
        .regex(/^[A-Za-z0-9_.-]+$/, 'use letters, digits, "-", "_" or "."')
        .default('default'),
      concurrency: z.int().positive().default(2),
      lock_ms: z.int().positive().default(60_000),
      stalled_interval_ms: z.int().positive().default(30_000),
      max_stalled: z.int().nonnegative().default(2),
      drain_timeout_ms: z.int().nonnegative().default(60_000),
      redis_down_exit_ms: z.int().positive().default(60_000),
    })
    .transform((c) => ({
      redis: c.redis,
      pool: c.pool,
      concurrency: c.concurrency,
      lockMs: c.lock_ms,
      stalledIntervalMs: c.stalled_interval_ms,
      maxStalled: c.max_stalled,
      drainTimeoutMs: c.drain_timeout_ms,
      redisDownExitMs: c.redis_down_exit_ms,
    })),
);

export type QueueConfig = z.output<ReturnType<typeof queueConfig>>;

/** How long a cancel or a follower's stop waits, by default, for workers to abort their running cases. */
const defaultCancelWaitMs = 5000;

/**
 * Submits runs to a fleet of `proctor worker` processes: records them in the store with what a worker needs
 * (ids only go to Redis) and dispatches what the limits allow. It executes nothing itself; workers dispatch
 * the rest as runs end. Cancel works on any queue run, whoever submitted it: runs no worker holds end at once,
 * running ones on their workers, which poll the store for the request.
 */
export class QueueRunner implements Runner {
  private seq = 0;
  private connection: Promise<{ redis: Redis; queue: Queue }> | undefined;
  private readonly groups = new Set<string>();
  private stopping: Promise<void> | undefined;
  private dispatching: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly config: QueueConfig,
    private readonly cancelWaitMs = defaultCancelWaitMs,
  ) {}

  private connect(): Promise<{ redis: Redis; queue: Queue }> {
    this.connection ??= (async () => {
      const redis = await connectRedis(this.config.redis);
      return { redis, queue: await openQueue(this.config.pool, redis) };
    })();
    return this.connection;
  }

  async submit(request: SubmitRequest): Promise<Submitted> {
    const [submitted] = await this.submitMany([request]);
    return submitted as Submitted;
  }

  async submitMany(requests: readonly SubmitRequest[]): Promise<Submitted[]> {
    const runs = requests.map((r) => {
      const runId = r.runId ?? `${r.groupId}.${++this.seq}`;
      const instanceId = r.instanceId ?? instanceIdFor(r.task.id, runId);
      this.groups.add(r.groupId);
      return {
        runId,
        groupId: r.groupId,
        taskId: r.task.id,
        instanceId,
        target: r.target,
        caseKey: r.case?.key,
        ...storedRequest(r, runSecrets(process.env, r)),
        startStep: r.startStep,
        queue: { pool: this.config.pool, limits: r.limits ?? [], work: queuedRequest(r) as unknown as JsonObject },
      };
    });
    await this.store.createRuns(runs);
    this.dispatchSoon();
    return runs.map((r) => ({ runId: r.runId, instanceId: r.instanceId }));
  }

  /**
   * Sends what may start now without holding up the submitter (connecting to Redis takes a while the first
   * time). A failure costs nothing but time: every worker dispatches from the store on its own tick.
   */
  private dispatchSoon(): void {
    this.dispatching = this.dispatching
      .then(async () => {
        const { queue } = await this.connect();
        await dispatch(this.store.queueLedger(), queue, this.config.pool);
      })
      .catch(() => {});
  }

  async warnings(): Promise<string[]> {
    const { redis } = await this.connect();
    const warning = await evictionWarning(redis, this.config.redis);
    return warning ? [warning] : [];
  }

  status(runId: string): Promise<RunRecord | undefined> {
    return this.store.getRun(runId);
  }

  /** What the pool's workers published: their gates are in their own processes. */
  async rateLimited(): Promise<RateLimited[]> {
    // A stopped runner has let its connection go.
    if (this.stopping) return [];
    const { redis } = await this.connect();
    // Commands wait through a reconnect (connectRedis): with Redis away, the follower must not wait with them.
    if (redis.status !== 'ready') return [];
    const late = new AbortController();
    try {
      const gaveUp = sleep(1000, late.signal).then(
        () => [],
        () => [],
      );
      return await Promise.race([readRateLimits(redis, this.config.pool, Date.now()), gaveUp]);
    } finally {
      // The timer must not hold a finished command's process open.
      late.abort();
    }
  }

  async cancel(runId: string): Promise<boolean> {
    const run = await this.store.getRun(runId);
    if (!run || isTerminal(run.status) || !(await this.store.queueLedger().stats(runId))) return false;
    await this.store.requestCancel(runId, Date.now());
    await this.endCanceled(
      (now) => this.store.queueLedger().cancelUnheld([runId], now),
      async () => {
        const now = await this.store.getRun(runId);
        return now !== undefined && !isTerminal(now.status);
      },
    );
    return true;
  }

  endCanceledGroup(groupId: string, now: number): Promise<number> {
    return this.store.queueLedger().cancelUnheldGroup(groupId, now);
  }

  /**
   * Ends at once what no worker holds (`endUnheld`, after the cancel was recorded for the workers), and waits a
   * bounded time for the workers to end the rest.
   */
  private async endCanceled(endUnheld: (now: number) => Promise<unknown>, unfinished: () => Promise<boolean>) {
    await endUnheld(Date.now());
    const until = Date.now() + this.cancelWaitMs;
    while (Date.now() < until && (await unfinished())) {
      await sleep(100);
      // A worker that died holding a run frees it when its lease lapses.
      await endUnheld(Date.now());
    }
  }

  /** Workers reconcile the queue; a submitter has nothing to start. */
  async start(): Promise<void> {}

  detach(): Promise<void> {
    this.groups.clear();
    return this.stop();
  }

  /** Cancels what this runner submitted and has not ended (a follower stopped by a signal), then disconnects. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      // Set-based whatever the group's size: its runs are counted, never read out.
      for (const groupId of this.groups) {
        if ((await this.store.requestGroupCancel(groupId, Date.now())) === 0) continue;
        await this.endCanceled(
          (now) => this.endCanceledGroup(groupId, now),
          async () => (await this.store.countActive(groupId)) > 0,
        );
      }
      await this.dispatching;
      if (this.connection) {
        const { redis, queue } = await this.connection;
        await queue.close();
        redis.disconnect();
      }
    })();
    return this.stopping;
  }
}

/** `[runner] kind = "queue"`: runs execute on `proctor worker` processes through BullMQ on Redis. */
export const queue: RunnerKindDef<QueueConfig> = {
  config: queueConfig,
  remote: true,
  open: (config, store) => new QueueRunner(store, config),
  // A load that fails is only not done ahead: the first connect loads again and reports.
  warm: () => void loadQueueClient().catch(() => {}),
};
