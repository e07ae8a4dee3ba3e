import { join, resolve } from 'node:path';
import { replay } from '../engine/context.js';
import { exportRun } from '../engine/export-run.js';
import { type Resource, resourcesOf } from '../engine/resources.js';
import { tearDownInstance } from '../engine/teardown.js';
import type { Env } from '../plan/env.js';
import { planTaskRun, type TaskRunFlags, type TaskRunPlan } from '../plan/task-plan.js';
import { openRunner, warmRunner } from '../runners/open.js';
import type { Submitted } from '../runners/runner.js';
import { openStore } from '../store/open.js';
import type { RunRecord, Store } from '../store/store.js';
import { followTaskRuns, type TaskRunEvent } from './follow-task-runs.js';
import { stopOnAbort } from './stop-on-abort.js';

export interface RunTaskOptions {
  cwd: string;
  /** The task file, relative to `cwd`. */
  file: string;
  flags: TaskRunFlags;
  env: Env;
  /** Each run's context, journal and artifacts go to `<outputDir>/<run id>/`. */
  outputDir?: string;
  /** Stops the runs (queued ones canceled, running ones aborted); while `--keep` holds, ends the hold. */
  signal?: AbortSignal;
  onSubmitted?: (plan: TaskRunPlan, submitted: readonly Submitted[]) => void;
  /** Something about where the runs execute that the user should know (the queue's Redis may evict jobs). */
  onWarning?: (message: string) => void;
  onEvent?: (event: TaskRunEvent) => void;
  /** A run's export to `outputDir`: where it went, or why it could not be written. */
  onExport?: (runId: string, dir: string, failure?: string) => void;
  /**
   * `--keep`: the runs that ended on their own and still hold workspaces or services, before the hold. The
   * hold lasts until `signal` aborts; everything is torn down after it.
   */
  onKept?: (kept: readonly KeptRun[]) => void;
  /** After a kept run's teardown. */
  onTornDown?: () => void;
}

/** A workspace or service `--keep` left up, by the step that made it: what a display names. */
export type KeptResource = [stepId: string, resource: Resource];

/** A run whose workspaces and services `--keep` left up. */
export interface KeptRun {
  run: RunRecord;
  resources: KeptResource[];
}

export interface RunTaskResult {
  plan: TaskRunPlan;
  submitted: Submitted[];
  /** The last record of each run followed to its end (fewer than submitted when stopped first). */
  runs: RunRecord[];
  /** The signal aborted before every run had ended. */
  interrupted: boolean;
  /** Some run's export to `outputDir` could not be written. */
  exportFailed: boolean;
}

/** The runs that still hold workspaces or services, from their stored context and journal. */
const keptRuns = async (store: Store, runs: readonly RunRecord[]): Promise<KeptRun[]> => {
  const kept: KeptRun[] = [];
  for (const run of runs) {
    if (run.status === 'CANCELED') continue;
    const instance = await store.getInstance(run.instanceId);
    if (!instance) continue;
    const resources = resourcesOf(replay(instance.context, await store.readJournal(run.instanceId)));
    if (resources.length > 0) kept.push({ run, resources });
  }
  return kept;
};

const tearDownAll = async (store: Store, runs: readonly Pick<Submitted, 'instanceId'>[]): Promise<void> => {
  for (const r of runs) await tearDownInstance(store, r.instanceId);
};

const aborted = (signal: AbortSignal | undefined): Promise<void> =>
  new Promise((done) => {
    if (!signal || signal.aborted) return done();
    signal.addEventListener('abort', () => done(), { once: true });
  });

/**
 * A task run, as `proctor task run` does it: plans the instances, submits one run each to the configured
 * runner, follows them in the store, exports their contexts, and with `--keep` holds what they left up until
 * the signal aborts, then tears it down. The caller never executes a task itself and never starts the runner.
 */
export const runTask = async (o: RunTaskOptions): Promise<RunTaskResult> => {
  const plan = planTaskRun(o.cwd, o.file, o.flags, o.env);
  warmRunner(plan.config.runner);
  const store = await openStore(plan.config.store);
  const runner = openRunner(plan.config.runner, store, plan.requests.length, plan.config.root);
  const stopping = stopOnAbort(runner, o.signal);
  try {
    for (const warning of (await runner.warnings?.()) ?? []) o.onWarning?.(warning);
    const submitted = await runner.submitMany(plan.requests);
    o.onSubmitted?.(plan, submitted);
    let runs: RunRecord[];
    try {
      runs = await followTaskRuns(store, submitted, {
        intervalMs: 100,
        stopped: stopping.stopped,
        onEvent: o.onEvent ?? (() => {}),
      });
    } catch (error) {
      // What --keep left up must not outlive a follower that can no longer say where it is.
      if (plan.keep) await runner.stop().then(() => tearDownAll(store, submitted));
      throw error;
    }
    const interrupted = o.signal?.aborted ?? false;
    await runner.stop();

    let exportFailed = false;
    if (o.outputDir !== undefined) {
      const base = resolve(o.cwd, o.outputDir);
      for (const run of runs) {
        const dir = join(base, run.runId);
        try {
          await exportRun(store, run.runId, dir);
          o.onExport?.(run.runId, dir);
        } catch (error) {
          exportFailed = true;
          o.onExport?.(run.runId, dir, (error as Error).message);
        }
      }
    }

    if (plan.keep && !interrupted) {
      const kept = await keptRuns(store, runs);
      if (kept.length > 0) {
        o.onKept?.(kept);
        // A pending promise does not keep Node alive, and the kept service is not this process's to wait on.
        const hold = setInterval(() => {}, 60_000);
        await aborted(o.signal).finally(() => clearInterval(hold));
        await tearDownAll(
          store,
          kept.map((k) => k.run),
        );
        o.onTornDown?.();
      }
    }
    return { plan, submitted, runs, interrupted, exportFailed };
  } finally {
    stopping.dispose();
    // After a failure midway (a lost store) runs may still be going: they end before their store closes.
    await runner.stop();
    await store.close();
  }
};
