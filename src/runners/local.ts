import { z } from 'zod';
import { AbortPool, type PooledAbort } from '../abort-pool.js';
import { executeRun } from '../engine/execute-run.js';
import { storedRequest } from '../engine/redact.js';
import { Services } from '../engine/services.js';
import type { RunRequest } from '../engine/task.js';
import { extended } from '../extended.js';
import { instanceIdFor } from '../ids.js';
import { once } from '../once.js';
import type { RunOwner, RunRecord, Store } from '../store/store.js';
import { rateLimitedNow } from '../targets/rate-gate.js';
import type { RunnerKindDef } from './kind.js';
import { currentOwner, defaultHeartbeatMs, defaultLeaseMs } from './owner.js';
import { reconcileOrphans } from './reconcile.js';
import type { ConcurrencyLimit, RateLimited, Runner, SubmitRequest, Submitted } from './runner.js';
import { Scheduler } from './scheduler.js';

export interface LocalRunnerOptions {
  /** How many runs execute at once in this process. */
  workers: number;
  /** How often this runner marks its runs seen and, once started, reconciles orphans. */
  heartbeatMs?: number;
  /** How long a run of another host may go unseen before reconciliation takes it for an orphan. */
  leaseMs?: number;
  /** How often this runner looks for cancel requests other processes recorded against its runs. */
  cancelPollMs?: number;
  /** How long stop() waits for running runs to tear down. */
  stopTimeoutMs?: number;
  /** How long an eval case runs before its claim is written (at the runner's next poll after that). */
  claimAfterMs?: number;
  env?: Readonly<Record<string, string | undefined>>;
  owner?: RunOwner;
  /** The project root the runs' specs name files relative to (default: the cwd). */
  projectRoot?: string;
}

interface Queued {
  request: RunRequest;
  limits: ConcurrencyLimit[];
}

const defaultClaimAfterMs = 1000;

const canceled = { status: 'CANCELED', outcome: 'canceled' } as const;

/** An eval case under way whose claim is not written yet (its abort is its entry in `active`). */
interface Unclaimed {
  startedAt: number;
  settle: (held: boolean) => void;
}

/**
 * Executes runs in this process, in the order and within the limits of the shared Scheduler (scheduler.ts).
 *
 * Every run names this process as its owner from the moment it is submitted, QUEUED included, so another
 * process's reconciler spares it while this process lives. While it holds runs, one timer renews their
 * `seen_at` and honours cancel requests recorded in the store by processes that do not own them (`runs
 * cancel`); once started, the same timer reconciles orphans.
 */
export class LocalRunner implements Runner {
  private readonly waiting = new Scheduler<Queued>();
  private readonly active = new Map<string, { abort: PooledAbort; done: Promise<void> }>();
  /** Each run's abort, handed to the next run once this one is done with it. */
  private readonly aborts: AbortPool;
  /** By run id, in the order they started. */
  private readonly unclaimed = new Map<string, Unclaimed>();
  /** Runs whose work is under way: `active` less the runs that only await their commit. */
  private busy = 0;
  /** A turn of the loop is due to refill the slots that runs freed during this one. */
  private refillDue = false;
  private readonly services: Services;
  private readonly owner: RunOwner;
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private lastHeartbeat = 0;
  private lastReconcile = 0;
  private started = false;
  private stopping: Promise<void> | undefined;
  private endedRuns = 0;
  private readonly endWaiters = new Set<{ at: number; wake: () => void }>();

  constructor(
    private readonly store: Store,
    private readonly options: LocalRunnerOptions,
  ) {
    this.owner = options.owner ?? currentOwner();
    this.aborts = new AbortPool(options.workers);
    // A plain copy of process.env: every read of it crosses into C++, and steps read the environment per run.
    // A spec's workspace pool never needs more slots than this runner has runs in flight.
    this.services = new Services(options.env ?? { ...process.env }, {
      owner: this.owner,
      maxSlots: options.workers,
      ...(options.projectRoot ? { projectRoot: options.projectRoot } : {}),
    });
  }

  async submit(request: SubmitRequest): Promise<Submitted> {
    const [submitted] = await this.submitMany([request]);
    return submitted as Submitted;
  }

  async submitMany(requests: readonly SubmitRequest[]): Promise<Submitted[]> {
    const queued = requests.map((r): Queued => {
      const runId = r.runId ?? `${r.groupId}.${++this.seq}`;
      const { limits = [], ...rest } = r;
      return {
        request: extended(rest, { runId, instanceId: r.instanceId ?? instanceIdFor(r.task.id, runId) }),
        limits,
      };
    });
    await this.store.createRuns(
      queued.map(({ request: r }) => ({
        runId: r.runId,
        groupId: r.groupId,
        taskId: r.task.id,
        instanceId: r.instanceId,
        target: r.target,
        caseKey: r.case?.key,
        // The run executes with the real values it was given; the store keeps them redacted.
        ...storedRequest(r, this.services.secrets(r)),
        startStep: r.startStep,
        owner: this.owner,
      })),
    );
    const submitted = queued.map(({ request }) => ({ runId: request.runId, instanceId: request.instanceId }));
    if (this.stopping) {
      // A stopped runner executes nothing more; left QUEUED, these would wait for a reconciler to fail them.
      const now = Date.now();
      await Promise.all(submitted.map((s) => this.store.finishRun(s.runId, canceled, now)));
      return submitted;
    }
    for (const q of queued) this.waiting.add(q);
    this.pump();
    this.schedule();
    return submitted;
  }

  status(runId: string): Promise<RunRecord | undefined> {
    return this.store.getRun(runId);
  }

  /** This process executes the runs: its own gates. */
  ended(n: number, ms: number): Promise<void> {
    if (n <= 0 || this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = {
        at: this.endedRuns + n,
        wake: () => {
          clearTimeout(timer);
          this.endWaiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.wake, ms);
      this.endWaiters.add(waiter);
    });
  }

  private runsEnded(n: number): void {
    this.endedRuns += n;
    for (const waiter of this.endWaiters) if (waiter.at <= this.endedRuns) waiter.wake();
  }

  async rateLimited(): Promise<RateLimited[]> {
    return rateLimitedNow();
  }

  async cancel(runId: string): Promise<boolean> {
    const running = this.active.get(runId);
    if (running) {
      // The run records its own end: CANCELED, or its real outcome when it finished first.
      running.abort.controller.abort();
      await running.done;
      return true;
    }
    if (!this.waiting.remove((q) => q.request.runId === runId)) return false;
    await this.store.finishRun(runId, canceled, Date.now());
    this.runsEnded(1);
    this.schedule();
    return true;
  }

  async start(): Promise<void> {
    if (this.started || this.stopping) return;
    this.started = true;
    this.lastReconcile = Date.now();
    await this.reconcile();
    this.schedule();
  }

  stop(): Promise<void> {
    this.stopping ??= this.drain();
    // A submitter waiting for room has none coming: it learns so at once.
    for (const waiter of this.endWaiters) waiter.wake();
    return this.stopping;
  }

  private async drain(): Promise<void> {
    this.started = false;
    const queued = this.waiting.clear();
    const now = Date.now();
    // Settled, not all: a store that cannot take these writes (lost) must not stop the running cases' abort and
    // the workspace teardown below; what stays QUEUED in the store is failed by `runs gc` later.
    await Promise.allSettled(queued.map((q) => this.store.finishRun(q.request.runId, canceled, now)));
    for (const { abort } of this.active.values()) abort.controller.abort();
    let timeout: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timeout = setTimeout(resolve, this.options.stopTimeoutMs ?? 10_000);
    });
    await Promise.race([Promise.all([...this.active.values()].map((a) => a.done)), timedOut]);
    clearTimeout(timeout);
    this.unschedule();
    await this.ticking;
    await this.services.workspaces.close();
  }

  private pump(): void {
    if (this.stopping) return;
    while (this.busy < this.options.workers) {
      const next = this.waiting.take();
      if (!next) return;
      this.launch(next);
    }
  }

  /**
   * Starts the next runs in the slots freed on the loop's next turn, not inside a run's reply handling: started
   * there, the next run's request cost a 5,000-case run ~1 s more CPU (its socket writes took twice as long in
   * profiles), and its claim still joins this run's finish in one commit. One turn serves every run that ended
   * in this one (replies read together), not an Immediate each.
   */
  private refill(): void {
    if (this.refillDue) return;
    this.refillDue = true;
    setImmediate(() => {
      this.refillDue = false;
      this.pump();
      // Nothing left to run: a run's finish waits for no other to share its commit (the run's last case, or a lull
      // before the submitter refills), which would hold up whoever waits on its result.
      if (this.busy === 0 && !this.waiting.waiting) this.store.commitGrouped();
    });
  }

  private launch(queued: Queued): void {
    const { request } = queued;
    const abort = this.aborts.take();
    this.busy++;
    let working = true;
    // The slot, and the run's limits, are free once its work is done: its commit lands while the next run calls
    // the model (a commit waits for the write batch in flight, a few ms that would otherwise idle every slot).
    const executed = (): void => {
      if (!working) return;
      working = false;
      // Ended before its claim was due: its finish records its start (RunFinish.startedAt).
      this.unclaimed.get(request.runId)?.settle(true);
      this.unclaimed.delete(request.runId);
      this.busy--;
      this.waiting.release(queued);
      this.refill();
    };
    // An eval case starts unclaimed: it writes nothing before its commit (its result records its steps), and most
    // end within a second, their finish the only write of their status (one runs update less per case, with its
    // index entries: 5,000 cases, 2.85% fewer instructions). One still running a second on is claimed (claimDue), so
    // the explorer and `runs list` show it RUNNING; a claim refused (canceled meanwhile, or taken by a reconciler)
    // or failed stops it, and it then commits nothing. A task run's steps journal as they go: it starts once
    // claimed (executeRun).
    const claimed = request.case
      ? new Promise<boolean>((settle) => this.unclaimed.set(request.runId, { startedAt: Date.now(), settle }))
      : undefined;
    const done = executeRun(request, {
      store: this.store,
      services: this.services,
      owner: this.owner,
      signal: abort.controller.signal,
      // submitMany created the instance with the run (a second instance of the same id would be refused).
      freshInstance: true,
      ...(claimed ? { claimed } : {}),
      executed,
    })
      .then(
        () => undefined,
        // executeRun records every failure of the run itself; it fails only when the store cannot take even that
        // (StoreLostError). The command learns of that from its own reads, and the run stays non-terminal in the
        // store for `runs gc`; unheard here, the rejection would kill the process.
        () => undefined,
      )
      .finally(() => {
        this.active.delete(request.runId);
        this.aborts.give(abort);
        executed();
        this.runsEnded(1);
        this.pump();
        this.schedule();
      });
    this.active.set(request.runId, { abort, done });
  }

  private holdsRuns(): boolean {
    return this.active.size > 0 || this.waiting.waiting;
  }

  /** Keeps the timer on exactly while there is something to do: runs held, or reconciliation once started. */
  private schedule(): void {
    const needed = !this.stopping && (this.started || this.holdsRuns());
    if (!needed) {
      this.unschedule();
      return;
    }
    if (this.timer) return;
    const every = Math.min(this.options.cancelPollMs ?? 1000, this.heartbeatMs());
    this.timer = setInterval(() => {
      this.ticking ??= this.tick().finally(() => {
        this.ticking = undefined;
      });
    }, every);
    // The timer serves the runs; it must not keep a finished command's process alive by itself.
    this.timer.unref();
  }

  private unschedule(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private heartbeatMs(): number {
    return this.options.heartbeatMs ?? defaultHeartbeatMs;
  }

  /** Claims the eval cases that have run `claimAfterMs` or longer unclaimed. */
  private claimDue(now: number): void {
    const due = now - (this.options.claimAfterMs ?? defaultClaimAfterMs);
    for (const [runId, unclaimed] of this.unclaimed) {
      if (unclaimed.startedAt > due) return;
      this.unclaimed.delete(runId);
      void this.store
        .claimRun(runId, this.owner, unclaimed.startedAt, 'grouped')
        .catch(() => false)
        .then((held) => {
          if (!held) this.active.get(runId)?.abort.controller.abort();
          unclaimed.settle(held);
        });
    }
  }

  private async tick(): Promise<void> {
    const now = Date.now();
    this.claimDue(now);
    try {
      if (this.holdsRuns()) {
        // cancel() ignores a run this runner does not hold (another runner of the same process may).
        for (const runId of await this.store.cancelRequested(this.owner)) void this.cancel(runId);
        if (now - this.lastHeartbeat >= this.heartbeatMs()) {
          this.lastHeartbeat = now;
          await this.store.heartbeat(this.owner, now);
        }
      }
      if (this.started && now - this.lastReconcile >= this.heartbeatMs()) {
        this.lastReconcile = now;
        await this.reconcile();
      }
    } catch {
      // A failed poll, heartbeat or sweep is retried on the next tick; a run's own writes surface store
      // failures where they matter, and an unhandled rejection here would take the whole process down.
    }
  }

  private reconcile(): Promise<unknown> {
    return reconcileOrphans(this.store, {
      leaseMs: this.options.leaseMs ?? defaultLeaseMs,
      host: this.owner.host,
    });
  }
}

const localConfig = once(() =>
  z
    .strictObject({
      workers: z.int().positive().optional(),
      heartbeat_ms: z.int().positive().optional(),
      lease_ms: z.int().positive().optional(),
    })
    .transform((c) => ({
      ...(c.workers !== undefined ? { workers: c.workers } : {}),
      ...(c.heartbeat_ms !== undefined ? { heartbeatMs: c.heartbeat_ms } : {}),
      ...(c.lease_ms !== undefined ? { leaseMs: c.lease_ms } : {}),
    })),
);

/** `[runner] kind = "local"` (the default): runs execute inside the command that submits them. */
export const local: RunnerKindDef<z.output<ReturnType<typeof localConfig>>> = {
  config: localConfig,
  remote: false,
  open: (config, store, defaultWorkers, projectRoot) =>
    new LocalRunner(store, {
      workers: config.workers ?? defaultWorkers,
      projectRoot,
      ...(config.heartbeatMs ? { heartbeatMs: config.heartbeatMs } : {}),
      ...(config.leaseMs ? { leaseMs: config.leaseMs } : {}),
    }),
};
