import { writeSummary } from '../../bundle/summary.js';
import { type EvalRunFlags, planEvalRun } from '../../plan/eval-plan.js';
import { openRunner } from '../../runners/open.js';
import { openStore } from '../../store/open.js';
import { exitCodes } from '../exit-codes.js';
import { follow } from '../follow.js';
import { ProgressDisplay } from '../progress-display.js';
import { onStopSignals } from '../signals.js';
import { summaryTable } from '../summary-table.js';

export interface EvalRunOptions extends EvalRunFlags {
  quiet?: boolean;
  timeout?: number;
}

/** `proctor eval run`: plan, submit every case to the configured runner, follow the store, summarise. */
export const evalRun = async (paths: string[], opts: EvalRunOptions): Promise<number> => {
  const plan = planEvalRun(process.cwd(), paths, { ...opts, timeoutS: opts.timeout }, process.env);
  const store = await openStore(plan.config.store.url, plan.config.root);
  const runner = openRunner(plan.config.runner, store, plan.maxConcurrency);
  const display = new ProgressDisplay(process.stderr, opts.quiet ?? false);
  let stopped: () => void = () => {};
  const stoppedPromise = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  const signals = onStopSignals(async () => {
    await runner.stop();
    stopped();
  });
  try {
    if (!opts.quiet)
      process.stderr.write(
        `run ${plan.groupId}: ${plan.requests.length} cases, max concurrency ${plan.maxConcurrency}\n`,
      );
    await runner.submitMany(plan.requests);
    const progress = await follow(store, plan.groupId, plan.requests.length, {
      intervalMs: 200,
      onProgress: (p) => display.update(p),
      stopped: stoppedPromise,
    });
    await runner.stop();
    const summary = writeSummary(plan.bundleDir, plan.groupId);
    process.stdout.write(`${summaryTable(summary)}\n\nbundle: ${plan.bundleDir}\n`);
    if (signals.received) return signals.received === 'SIGINT' ? exitCodes.sigint : exitCodes.sigterm;
    return progress.passed === progress.total ? exitCodes.ok : exitCodes.failed;
  } finally {
    signals.dispose();
    await store.close();
  }
};
