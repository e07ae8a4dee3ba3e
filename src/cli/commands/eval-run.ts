import { skippedLinesWarning } from '../../bundle/reader.js';
import { writeSummary } from '../../bundle/summary.js';
import { type EvalRunFlags, type EvalRunPlan, planEvalRun } from '../../plan/eval-plan.js';
import { openRunner } from '../../runners/open.js';
import { sleep } from '../../sleep.js';
import { openStore } from '../../store/open.js';
import { exitCodes } from '../exit-codes.js';
import { follow } from '../follow.js';
import { ProgressDisplay } from '../progress-display.js';
import { signalExitCode, stopRunnerOnSignals } from '../signals.js';
import { summaryTable } from '../summary-table.js';

export interface EvalRunOptions extends EvalRunFlags {
  quiet?: boolean;
  timeout?: number;
  dryRun?: boolean;
}

const say = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** What --resume / --rerun-failed chose, in the words of the seed's review. */
const reportSelection = (plan: EvalRunPlan): void => {
  const s = plan.selection;
  if (!s) return;
  const label = s.mode === 'resume' ? 'Resume' : 'Rerun-failed';
  say(`${label}: found ${s.found} existing result(s), skipping ${s.skipped} completed.`);
  if (s.skippedLines) say(`warning: ${skippedLinesWarning(s.skippedLines, `${s.from}/index.jsonl`)}`);
  for (const id of s.missing) {
    say(`warning: ${id.eval} · ${id.test} · ${id.prompt} · ${id.target} failed before but is no longer in the suite`);
  }
  if (s.drifted.length) say(`note: ${s.drifted.length} case(s) changed since that run; the bundle is now mixed`);
  say(`${label}: running ${s.run.length} case(s) into ${plan.bundleDir}`);
};

/** `proctor eval run`: plan, submit every case to the configured runner, follow the store, summarise. */
export const evalRun = async (paths: string[], opts: EvalRunOptions): Promise<number> => {
  const plan = planEvalRun(process.cwd(), paths, { ...opts, timeoutS: opts.timeout }, process.env);
  reportSelection(plan);
  if (opts.dryRun) {
    process.stdout.write(`${plan.requests.length} of ${plan.cases.length} case(s) would run\n`);
    return exitCodes.ok;
  }
  const store = await openStore(plan.config.store);
  const runner = openRunner(plan.config.runner, store, plan.maxConcurrency);
  const display = new ProgressDisplay(process.stderr, opts.quiet ?? false);
  const signals = stopRunnerOnSignals(runner);
  try {
    if (!opts.quiet) {
      say(`run ${plan.groupId}: ${plan.requests.length} cases, max concurrency ${plan.maxConcurrency}`);
    }
    // Submitted in chunks, a window ahead of what has finished: the first cases start while the rest are
    // recorded, and a 100,000-case run does not hold every queued task in memory at once.
    let submitFailure: unknown;
    const total = plan.requests.length;
    const chunk = Math.max(500, plan.maxConcurrency * 2);
    // Taken out of the plan: once submitted, a request belongs to the runner, and finished tasks can be collected.
    const unsubmitted = plan.requests.splice(0);
    const submitted = (async () => {
      for (let sent = 0; unsubmitted.length > 0 && !signals.received; sent += chunk) {
        while (sent - (await store.countFinished(plan.groupId)) > 2 * chunk && !signals.received) await sleep(50);
        await runner.submitMany(unsubmitted.splice(0, chunk));
      }
    })().catch(async (error: unknown) => {
      submitFailure = error;
      await runner.stop();
      signals.markStopped();
    });
    await follow(store, plan.groupId, total, {
      intervalMs: 200,
      onProgress: (p) => display.update(p),
      wantsProgress: () => display.wantsUpdate(),
      stopped: signals.stopped,
    });
    await submitted;
    if (submitFailure) throw submitFailure;
    await runner.stop();
    const summary = writeSummary(plan.bundleDir, plan.bundleRunId);
    process.stdout.write(`${summaryTable(summary)}\n\nbundle: ${plan.bundleDir}\n`);
    if (signals.received) return signalExitCode(signals.received);
    // The bundle decides: after a resume or rerun its latest rows, not just this command's, must all pass.
    return summary.counts.passed === summary.counts.total ? exitCodes.ok : exitCodes.failed;
  } finally {
    signals.dispose();
    // After a failure midway (a lost store) cases may still be running: they end before their store closes.
    await runner.stop();
    await store.close();
  }
};
