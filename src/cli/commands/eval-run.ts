import { type BundleLock, lockBundle } from '../../bundle/lock.js';
import { skippedLinesWarning } from '../../bundle/reader.js';
import { writeSummary } from '../../bundle/summary.js';
import { BundleWriter } from '../../bundle/writer.js';
import { loadProjectConfig } from '../../plan/config.js';
import { type EvalRunFlags, type EvalRunPlan, planEvalRun } from '../../plan/eval-plan.js';
import { targetBundle } from '../../plan/select-bundle.js';
import { openRunner } from '../../runners/open.js';
import { currentOwner, ownerProcessState } from '../../runners/owner.js';
import { sleep } from '../../sleep.js';
import { openStore } from '../../store/open.js';
import { loadEnvFile } from '../env-file.js';
import { exitCodes } from '../exit-codes.js';
import { follow } from '../follow.js';
import { ProgressDisplay } from '../progress-display.js';
import { planReport, type ReportPlan, reportRun } from '../run-report.js';
import { signalExitCode, stopRunnerOnSignals } from '../signals.js';

export interface EvalRunOptions extends EvalRunFlags {
  quiet?: boolean;
  timeout?: number;
  dryRun?: boolean;
  export?: string[];
  compare?: string;
  envPath?: string;
  passRule?: string;
  failUnder?: string;
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

const lock = (dir: string): BundleLock => lockBundle(dir, currentOwner(), ownerProcessState);

/**
 * Nothing selected: no run is recorded. The bundle stays as it is (a torn tail cut off, the summary
 * rebuilt), and a new `--output` folder becomes a valid empty bundle. Nothing failed here, so exit 0.
 */
const runNothing = async (plan: EvalRunPlan, report: ReportPlan): Promise<number> => {
  say(`nothing to run: ${plan.bundleDir} gets no new rows`);
  const writer = new BundleWriter(plan.bundleDir);
  writer.open();
  writer.close();
  await reportRun(writeSummary(plan.bundleDir, plan.bundleRunId), plan.bundleDir, report);
  return exitCodes.ok;
};

/** Submits every planned case to the configured runner, follows the store and summarises the bundle. */
const runPlan = async (plan: EvalRunPlan, opts: EvalRunOptions, report: ReportPlan): Promise<number> => {
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
    // The bundle decides: after a resume or rerun its latest rows, not just this command's, must pass the gate.
    const code = await reportRun(summary, plan.bundleDir, report);
    return signals.received ? signalExitCode(signals.received) : code;
  } catch (error) {
    // A run that fails midway (its store lost) still leaves a summary of the rows that were committed.
    await runner.stop();
    writeSummary(plan.bundleDir, plan.bundleRunId);
    throw error;
  } finally {
    signals.dispose();
    // After a failure midway (a lost store) cases may still be running: they end before their store closes.
    await runner.stop();
    await store.close();
  }
};

/**
 * `proctor eval run`: plan, submit every case to the configured runner, follow the store, summarise. The
 * command is the one writer of its bundle from before the plan reads it until it exits.
 */
export const evalRun = async (paths: string[], opts: EvalRunOptions): Promise<number> => {
  const cwd = process.cwd();
  // Locked before planning: a selection read while another command appends would run the cases it finishes.
  if (opts.envPath !== undefined) loadEnvFile(cwd, opts.envPath);
  const config = loadProjectConfig(cwd, process.env);
  const report = planReport(opts, config, cwd);
  const known = opts.dryRun ? undefined : targetBundle(opts, config, cwd);
  let held = known === undefined ? undefined : lock(known);
  try {
    const plan = planEvalRun(config, cwd, paths, { ...opts, timeoutS: opts.timeout }, process.env);
    reportSelection(plan);
    for (const warning of plan.warnings) process.stderr.write(`${warning}\n`);
    if (opts.dryRun) {
      process.stdout.write(`${plan.requests.length} of ${plan.cases.length} case(s) would run\n`);
      return exitCodes.ok;
    }
    held ??= lock(plan.bundleDir);
    return plan.requests.length === 0 ? await runNothing(plan, report) : await runPlan(plan, opts, report);
  } finally {
    held?.release();
  }
};
