import { join, resolve } from 'node:path';
import { replay } from '../../engine/context.js';
import { exportRun } from '../../engine/export-run.js';
import { describeResource, resourcesOf } from '../../engine/resources.js';
import { tearDownInstance } from '../../engine/teardown.js';
import { planTaskRun, type TaskRunFlags } from '../../plan/task-plan.js';
import { openRunner } from '../../runners/open.js';
import type { Submitted } from '../../runners/runner.js';
import { openStore } from '../../store/open.js';
import type { RunRecord, Store } from '../../store/store.js';
import { exitCodes } from '../exit-codes.js';
import { signalExitCode, stopRunnerOnSignals } from '../signals.js';
import { followTaskRuns } from './task-follow.js';

export interface TaskRunOptions extends TaskRunFlags {
  outputDir?: string;
}

/** Prints where each kept run's workspaces and services are; returns the runs that hold any. */
const showKept = async (store: Store, runs: readonly RunRecord[]): Promise<RunRecord[]> => {
  const held: RunRecord[] = [];
  for (const run of runs) {
    if (run.status === 'CANCELED') continue;
    const instance = await store.getInstance(run.instanceId);
    if (!instance) continue;
    const resources = resourcesOf(replay(instance.context, await store.readJournal(run.instanceId)));
    if (resources.length === 0) continue;
    held.push(run);
    process.stdout.write(
      `kept ${run.runId}:\n${resources.map(([id, r]) => `  ${describeResource(id, r)}`).join('\n')}\n`,
    );
  }
  return held;
};

const tearDownAll = async (store: Store, runs: readonly Pick<Submitted, 'instanceId'>[]): Promise<void> => {
  for (const r of runs) await tearDownInstance(store, r.instanceId);
};

/**
 * `proctor task run TASK`: submit one run per instance to the configured runner, follow the store, export
 * contexts, hold `--keep` runs until Ctrl-C. The command never executes a task itself, and never starts the
 * runner: it only submits, and awaits `stop()`.
 */
export const taskRun = async (file: string, opts: TaskRunOptions): Promise<number> => {
  const cwd = process.cwd();
  const plan = planTaskRun(cwd, file, opts, process.env);
  const store = await openStore(plan.config.store);
  const runner = openRunner(plan.config.runner, store, plan.requests.length, plan.config.root);
  const signals = stopRunnerOnSignals(runner);
  try {
    const submitted = await runner.submitMany(plan.requests);
    process.stderr.write(
      `task ${plan.tasks[0]?.id ?? file}: ${submitted.length} run${submitted.length > 1 ? 's' : ''} (${submitted.map((s) => s.runId).join(', ')})\n`,
    );
    let runs: RunRecord[];
    try {
      runs = await followTaskRuns(store, submitted, {
        out: process.stdout,
        detailed: submitted.length === 1,
        intervalMs: 100,
        stopped: signals.stopped,
      });
    } catch (error) {
      // What --keep left up must not outlive a follower that can no longer say where it is.
      if (plan.keep) await runner.stop().then(() => tearDownAll(store, submitted));
      throw error;
    }
    const interrupted = signals.received;
    await runner.stop();

    let exportFailed = false;
    if (opts.outputDir !== undefined) {
      const base = resolve(cwd, opts.outputDir);
      for (const run of runs) {
        const dir = join(base, run.runId);
        try {
          await exportRun(store, run.runId, dir);
          process.stderr.write(`context: ${join(dir, 'context.json')}\n`);
        } catch (error) {
          exportFailed = true;
          process.stderr.write(`error: cannot write ${run.runId} to ${dir}: ${(error as Error).message}\n`);
        }
      }
    }

    if (plan.keep && !interrupted) {
      const held = await showKept(store, runs);
      if (held.length > 0) {
        process.stdout.write('holding; press Ctrl-C to tear down\n');
        // A pending promise does not keep Node alive, and the kept service is not this process's to wait on.
        const hold = setInterval(() => {}, 60_000);
        await signals.stopped.finally(() => clearInterval(hold));
        await tearDownAll(store, held);
        process.stdout.write('torn down\n');
      }
    }
    if (interrupted) return signalExitCode(interrupted);
    if (exportFailed) return exitCodes.failed;
    if (signals.received) return signalExitCode(signals.received);
    return runs.length === submitted.length && runs.every((r) => r.status === 'COMPLETED' && r.outcome === 'passed')
      ? exitCodes.ok
      : exitCodes.failed;
  } finally {
    signals.dispose();
    // After a failure midway (a lost store) runs may still be going: they end before their store closes.
    await runner.stop();
    await store.close();
  }
};
