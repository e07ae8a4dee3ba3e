import { executeRun } from '../engine/execute-run.js';
import { Services } from '../engine/services.js';
import type { RunRequest } from '../engine/task.js';
import { instanceIdFor } from '../ids.js';
import type { RunOwner, RunRecord, Store } from '../store/store.js';
import { currentOwner } from './owner.js';
import type { ConcurrencyLimit, Runner, SubmitRequest, Submitted } from './runner.js';

export interface LocalRunnerOptions {
  /** How many runs execute at once in this process. */
  workers: number;
  heartbeatMs?: number;
  /** How long stop() waits for running runs to tear down. */
  stopTimeoutMs?: number;
  env?: Readonly<Record<string, string | undefined>>;
  owner?: RunOwner;
}

interface Queued {
  request: RunRequest;
  limits: ConcurrencyLimit[];
}

/**
 * Executes runs in this process. Runs wait in buckets by the limits they share (typically one bucket per
 * target), and a free worker takes the next run of the first bucket, in turn, whose limits have room: one
 * work-conserving queue, so a slow target never holds slots another target could use.
 */
export class LocalRunner implements Runner {
  private readonly buckets = new Map<string, Queued[]>();
  private readonly bucketOrder: string[] = [];
  private nextBucket = 0;
  private readonly inFlight = new Map<string, number>();
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly services: Services;
  private readonly owner: RunOwner;
  private seq = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly options: LocalRunnerOptions,
  ) {
    this.services = new Services(options.env ?? process.env);
    this.owner = options.owner ?? currentOwner();
  }

  async submit(request: SubmitRequest): Promise<Submitted> {
    const [submitted] = await this.submitMany([request]);
    return submitted as Submitted;
  }

  async submitMany(requests: readonly SubmitRequest[]): Promise<Submitted[]> {
    const queued = requests.map((r): Queued => {
      const runId = r.runId ?? `${r.groupId}.${++this.seq}`;
      const { limits = [], ...rest } = r;
      return { request: { ...rest, runId, instanceId: r.instanceId ?? instanceIdFor(r.task.id, runId) }, limits };
    });
    await this.store.createRuns(
      queued.map(({ request: r }) => ({
        runId: r.runId,
        groupId: r.groupId,
        taskId: r.task.id,
        instanceId: r.instanceId,
        target: r.target,
        caseKey: r.case?.key,
        metadata: r.metadata,
        spec: r.task as unknown as RunRequest['metadata'],
        context: r.context,
        startStep: r.startStep,
      })),
    );
    for (const q of queued) this.enqueue(q);
    this.pump();
    return queued.map(({ request }) => ({ runId: request.runId, instanceId: request.instanceId }));
  }

  status(runId: string): Promise<RunRecord | undefined> {
    return this.store.getRun(runId);
  }

  async cancel(runId: string): Promise<boolean> {
    const running = this.active.get(runId);
    if (running) {
      running.controller.abort();
      await running.done;
      return true;
    }
    for (const bucket of this.buckets.values()) {
      const index = bucket.findIndex((q) => q.request.runId === runId);
      if (index >= 0) {
        bucket.splice(index, 1);
        await this.store.finishRun(runId, { status: 'CANCELED', outcome: 'canceled' }, Date.now());
        return true;
      }
    }
    return false;
  }

  async start(): Promise<void> {}

  stop(): Promise<void> {
    this.stopping ??= this.drain();
    return this.stopping;
  }

  private async drain(): Promise<void> {
    const queued = [...this.buckets.values()].flat();
    this.buckets.clear();
    this.bucketOrder.length = 0;
    const now = Date.now();
    for (const q of queued)
      await this.store.finishRun(q.request.runId, { status: 'CANCELED', outcome: 'canceled' }, now);
    for (const { controller } of this.active.values()) controller.abort();
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, this.options.stopTimeoutMs ?? 10_000).unref());
    await Promise.race([Promise.all([...this.active.values()].map((a) => a.done)), timeout]);
    this.stopHeartbeat();
    this.services.close();
  }

  private enqueue(q: Queued): void {
    const signature = q.limits.map((l) => l.key).join('\n');
    let bucket = this.buckets.get(signature);
    if (!bucket) {
      bucket = [];
      this.buckets.set(signature, bucket);
      this.bucketOrder.push(signature);
    }
    bucket.push(q);
  }

  private hasRoom(limits: readonly ConcurrencyLimit[]): boolean {
    return limits.every((l) => (this.inFlight.get(l.key) ?? 0) < l.limit);
  }

  private takeNext(): Queued | undefined {
    const n = this.bucketOrder.length;
    for (let i = 0; i < n; i++) {
      const index = (this.nextBucket + i) % n;
      const bucket = this.buckets.get(this.bucketOrder[index] as string);
      const head = bucket?.[0];
      if (head && this.hasRoom(head.limits)) {
        this.nextBucket = (index + 1) % n;
        return bucket.shift();
      }
    }
    return undefined;
  }

  private pump(): void {
    if (this.stopping) return;
    while (this.active.size < this.options.workers) {
      const next = this.takeNext();
      if (!next) return;
      this.launch(next);
    }
  }

  private launch({ request, limits }: Queued): void {
    for (const l of limits) this.inFlight.set(l.key, (this.inFlight.get(l.key) ?? 0) + 1);
    const controller = new AbortController();
    const done = executeRun(request, {
      store: this.store,
      services: this.services,
      owner: this.owner,
      signal: controller.signal,
    })
      .then(() => undefined)
      .finally(() => {
        this.active.delete(request.runId);
        for (const l of limits) this.inFlight.set(l.key, (this.inFlight.get(l.key) ?? 1) - 1);
        if (this.active.size === 0) this.stopHeartbeat();
        this.pump();
      });
    this.active.set(request.runId, { controller, done });
    this.startHeartbeat();
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      void this.store.heartbeat([...this.active.keys()], Date.now()).catch(() => {});
    }, this.options.heartbeatMs ?? 30_000);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}
