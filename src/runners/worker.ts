import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { executeRun, released } from '../engine/execute-run.js';
import { ProjectFiles } from '../engine/project-files.js';
import { Services } from '../engine/services.js';
import type { Claim, Commit } from '../store/queue-ledger.js';
import type { Store } from '../store/store.js';
import { rateLimitedNow } from '../targets/rate-gate.js';
import { currentOwner } from './owner.js';
import type { QueueConfig } from './queue.js';
import {
  connectRedis,
  dispatch,
  type JobData,
  openQueue,
  publishRateLimits,
  queueName,
  sendJobs,
} from './queue-jobs.js';
import { type QueuedRequest, requestOf, versionRefusal } from './queue-request.js';
import { evictionWarning } from './redis-policy.js';

type ClaimedAttempt = Extract<Claim, { kind: 'claimed' }>;

interface Running {
  epoch: number;
  controller: AbortController;
}

/** What ended a worker: a drain that finished, or a Redis connection that did not come back. */
export type WorkerEnd = 'drained' | 'redis_lost';

// Lease renewal and cancel polling run together on this tick: it bounds how late a cancel is noticed.
const tickMs = 500;
const dispatchEveryMs = 1000;
const idleDispatchEveryMs = 8000;

/**
 * One `proctor worker` process: takes case jobs from its pool's queue and executes each run through the
 * engine, as the local runner does, under a claim in the store. The claim bumps the run's epoch and the commit
 * must still hold it, so a job delivered twice or a blocked worker's late finish never commits a second
 * result. The lease lives in the store and is renewed every tick; the same tick picks up cancel requests,
 * dispatches what runs' limits allow and re-sends jobs Redis lost.
 */
export class QueueWorker {
  private readonly running = new Map<string, Running>();
  private readonly services: Services;
  private readonly owner = currentOwner();
  private readonly id: string;
  private readonly projectFiles: ProjectFiles;
  private worker: Worker<JobData> | undefined;
  private redis: Redis | undefined;
  private queue: Awaited<ReturnType<typeof openQueue>> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private housekeeping = false;
  private lastDispatch = 0;
  private dispatchEvery = dispatchEveryMs;
  private lastReconcile = 0;
  private redisDownSince: number | undefined;
  private draining = false;
  private dispatching: Promise<number> | undefined;
  private dispatchAgain = false;
  private end: ((why: WorkerEnd) => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly config: QueueConfig,
    env: Readonly<Record<string, string | undefined>>,
    projectRoot: string,
  ) {
    this.projectFiles = new ProjectFiles(projectRoot);
    this.id = `${this.owner.host}:${this.owner.pid}:${this.owner.startedAt}`;
    this.services = new Services(env, { owner: this.owner, maxSlots: config.concurrency, projectRoot });
  }

  /**
   * Starts taking jobs (`ready` once it does; `warn` if its Redis may evict jobs); resolves when the worker has
   * drained or lost Redis for good.
   */
  async run(events: { ready?: () => void; warn?: (message: string) => void } = {}): Promise<WorkerEnd> {
    const { Worker } = await import('./queue-client.js');
    this.redis = await connectRedis(this.config.redis);
    this.queue = await openQueue(this.config.pool, this.redis);
    void evictionWarning(this.redis, this.config.redis).then((warning) => warning && events.warn?.(warning));
    const ended = new Promise<WorkerEnd>((resolve) => {
      this.end = resolve;
    });
    this.worker = new Worker<JobData>(queueName(this.config.pool), (job, token) => this.process(job, token), {
      connection: this.redis,
      concurrency: this.config.concurrency,
      lockDuration: this.config.lockMs,
      stalledInterval: this.config.stalledIntervalMs,
      maxStalledCount: this.config.maxStalled,
    });
    this.worker.on('error', () => {});
    this.timer = setInterval(() => void this.tick(), tickMs);
    events.ready?.();
    return ended;
  }

  private async process(job: Job<JobData>, token: string | undefined): Promise<string> {
    const { runId } = job.data;
    const claim = await this.store.queueLedger().claim(runId, this.id, this.owner, Date.now(), this.config.lockMs);
    if (claim.kind === 'duplicate') return 'duplicate';
    if (claim.kind === 'held') {
      // Another worker holds a live lease (it may be slow, or blocked): look again once it would have lapsed.
      const { DelayedError } = await import('./queue-client.js');
      await job.moveToDelayed(claim.untilMs + 100, token);
      throw new DelayedError();
    }
    // Each commit may hand this worker the next run of the same group to execute in the same slot (a chain):
    // the job stays active, and BullMQ keeps renewing its lock, until the chain ends.
    let current: { runId: string; claim: ClaimedAttempt } | undefined = { runId, claim };
    let ended: string | undefined;
    while (current) {
      const step = await this.execute(current.runId, current.claim);
      ended = step.ended;
      current = step.chained;
    }
    return ended ?? 'done';
  }

  /** Executes one claimed run; returns how it ended and the run its commit chained to this worker, if any. */
  private async execute(
    runId: string,
    claim: ClaimedAttempt,
  ): Promise<{ ended: string; chained?: { runId: string; claim: ClaimedAttempt } }> {
    const ledger = this.store.queueLedger();
    const controller = new AbortController();
    if (claim.cancelRequested) controller.abort();
    this.running.set(runId, { epoch: claim.epoch, controller });
    let handed: Commit = { committed: false };
    const work = claim.work as unknown as QueuedRequest;
    try {
      await executeRun(requestOf(runId, claim.run, work), {
        store: this.store,
        services: this.services,
        owner: this.owner,
        signal: controller.signal,
        freshInstance: claim.run.first,
        commit: async (id, finish, now) => {
          // A draining worker takes nothing more: the freed slot goes back to the queue.
          const chain = this.draining ? undefined : { worker: this.id, owner: this.owner, leaseMs: this.config.lockMs };
          handed = await ledger.commit(id, claim.epoch, finish, now, chain);
          return handed.committed;
        },
        refusal: (req) => versionRefusal(work) ?? this.projectFiles.mismatch(req.case?.projectFiles),
      });
    } finally {
      this.running.delete(runId);
    }
    const ended = controller.signal.reason === released ? 'released' : 'done';
    const { next, chained, queued } = handed;
    if (chained) return { ended, chained };
    // Sent before this job completes, so BullMQ's completion fetches it (or another) in the same call.
    if (next && this.queue) await sendJobs(this.queue, [next]).catch(() => {});
    // The freed slot may fit a waiting run of other limits; with none waiting (a run's last cases) a dispatch
    // would be a locked transaction that finds nothing.
    else if (queued) void this.dispatchNow();
    return { ended };
  }

  /**
   * Dispatches are serialised fleet-wide (the pool's lock), so a burst of cases ending here makes one more
   * dispatch after the one under way, not one each: it sees every slot they freed. Resolves to how many jobs
   * they sent.
   */
  private dispatchNow(): Promise<number> {
    if (this.dispatching) {
      this.dispatchAgain = true;
      return this.dispatching;
    }
    this.dispatching = (async () => {
      let sent = 0;
      do {
        this.dispatchAgain = false;
        if (!this.queue || this.draining) return sent;
        this.lastDispatch = Date.now();
        try {
          sent += await dispatch(this.store.queueLedger(), this.queue, this.config.pool);
        } catch {
          // Retried on the next tick; an unhandled rejection would take the worker down.
        }
      } while (this.dispatchAgain);
      return sent;
    })().finally(() => {
      this.dispatching = undefined;
    });
    return this.dispatching;
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    const now = Date.now();
    try {
      this.watchRedis(now);
      const ledger = this.store.queueLedger();
      const ids = [...this.running.keys()];
      const { held, cancel } = await ledger.renew(ids, this.id, now, this.config.lockMs);
      // Taken over (this worker was blocked past its lease) or canceled: the execution stops; its commit is
      // refused or records CANCELED.
      for (const id of ids) if (!held.includes(id) || cancel.includes(id)) this.running.get(id)?.controller.abort();
    } catch {
      // The store is briefly out of reach: the next tick tries again.
    } finally {
      this.ticking = false;
    }
    void this.housekeep(now);
  }

  /**
   * Off the lease tick: a dispatch waits for the pool's lock behind every other dispatcher, and on a loaded
   * machine that would hold back the next renewal (a lapsed lease re-runs the case elsewhere) and the notice
   * of a cancel.
   */
  private async housekeep(now: number): Promise<void> {
    if (this.housekeeping) return;
    this.housekeeping = true;
    try {
      if (this.redis) await publishRateLimits(this.redis, this.config.pool, rateLimitedNow());
      if (now - this.lastDispatch >= this.dispatchEvery) {
        // Nothing waiting, nothing to dispatch: the check costs one index probe, the dispatch a locked transaction.
        if (await this.store.queueLedger().hasWaiting(this.config.pool)) {
          // Runs wait while a fleet works at their limits, and every commit hands its slot on: this dispatch only
          // covers one that failed (a submitter's, a commit's), so it backs off while it finds nothing to send.
          // At 1 s, 4 busy workers made 0.04 locked transactions per case that sent nothing.
          const sent = await this.dispatchNow();
          this.dispatchEvery = sent > 0 ? dispatchEveryMs : Math.min(2 * this.dispatchEvery, idleDispatchEveryMs);
        } else {
          this.lastDispatch = now;
          this.dispatchEvery = dispatchEveryMs;
        }
      }
      if (this.queue && now - this.lastReconcile >= this.config.stalledIntervalMs) {
        this.lastReconcile = now;
        const ledger = this.store.queueLedger();
        await sendJobs(this.queue, await ledger.lost(this.config.pool, now, this.config.stalledIntervalMs));
      }
    } catch {
      // The store or Redis is briefly out of reach: the next tick tries again.
    } finally {
      this.housekeeping = false;
    }
  }

  /** A Redis connection that stays down past `redisDownExitMs` ends the worker, so a supervisor restarts it. */
  private watchRedis(now: number): void {
    const status = this.redis?.status;
    if (status === 'ready') {
      this.redisDownSince = undefined;
      return;
    }
    this.redisDownSince ??= now;
    if (status === 'end' || now - this.redisDownSince >= this.config.redisDownExitMs) this.end?.('redis_lost');
  }

  /**
   * Stops taking jobs and lets running cases finish; after `drainTimeoutMs` gives them back to the queue at once
   * (a new epoch fences the abandoned executions out) and sends their fresh jobs.
   */
  async drain(timeoutMs = this.config.drainTimeoutMs): Promise<void> {
    this.draining = true;
    const closing = this.worker?.close() ?? Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      closing.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      const ledger = this.store.queueLedger();
      for (const [runId, r] of this.running) {
        if (await ledger.release(runId, r.epoch)) r.controller.abort(released);
        else r.controller.abort();
      }
      await closing;
      this.draining = false;
      await this.dispatchNow();
    }
    this.end?.('drained');
  }

  /** Aborts what still runs (each records its own end, if it still holds its epoch) and releases connections. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    // Takes nothing more: a commit from here on hands its freed slot back to the queue.
    this.draining = true;
    for (const r of this.running.values()) r.controller.abort();
    await this.worker?.close(true).catch(() => {});
    await this.queue?.close().catch(() => {});
    this.redis?.disconnect();
    await this.services.workspaces.close();
  }
}
