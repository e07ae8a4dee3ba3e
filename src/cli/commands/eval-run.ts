import { runEval } from '../../api/run-eval.js';
import { skippedLinesWarning } from '../../bundle/reader.js';
import { loadProjectConfig } from '../../plan/config.js';
import type { EvalRunFlags, EvalRunPlan } from '../../plan/eval-plan.js';
import { loadEnvFile } from '../env-file.js';
import { exitCodes } from '../exit-codes.js';
import { OldGeneration } from '../old-generation.js';
import { OptimisationBudget } from '../optimisation-budget.js';
import { ProgressDisplay } from '../progress-display.js';
import { planReport, reportRun } from '../run-report.js';
import { ReportRows } from '../run-report-rows.js';
import { onStopSignals, signalExitCode } from '../signals.js';
import { YoungGeneration } from '../young-generation.js';

export interface EvalRunOptions extends EvalRunFlags {
  quiet?: boolean;
  timeout?: number;
  dryRun?: boolean;
  detach?: boolean;
  export?: string[];
  compare?: string;
  envPath?: string;
  passRule?: string;
  failUnder?: string;
}

/** Runs of this many cases or more keep a young generation of 32 MB, smaller runs 16 MB. */
const largeRunCases = 3_000;

/**
 * The young generation a run keeps (both semi-spaces). At 16 MB scavenges come twice as often as at V8's largest,
 * 32 MB, each copying the cases in flight and promoting more of them, which a long run pays for: at 5,000 cases -j 50
 * valgrind counted 11.93 G instructions at 16 MB and 11.50 G at 32. A short run pays for 32 MB instead, with a
 * second full collection: 3.15 against 3.29 G at 1,000 cases, even at 2,500 (6.19 and 6.22). The memory comes out of
 * SQLite's page cache (src/store/sqlite.ts): peak RSS at 5,000 cases 125-132 MB at -j 50 and 137-146 MB at -j 200
 * (16 MB and the larger page cache: 127-130 and 138). It is held at its start size while the plan is made
 * (YoungGeneration), and grows once the run starts.
 */
const youngBytes = (cases: number): number => (cases >= largeRunCases ? 32 : 16) * 2 ** 20;

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
  say(`${label}: running ${plan.requests.size} case(s) into ${plan.bundleDir}`);
};

/**
 * `proctor eval run`: runEval with progress on stderr, then the report (summary, failures, exports, the
 * comparison) and the exit code its gate gives.
 */
export const evalRun = async (paths: string[], opts: EvalRunOptions): Promise<number> => {
  const cwd = process.cwd();
  if (opts.envPath !== undefined) loadEnvFile(cwd, opts.envPath);
  const config = loadProjectConfig(cwd, process.env);
  const report = planReport(opts, config, cwd);
  const rows = await ReportRows.of(report);
  const display = new ProgressDisplay(process.stderr, opts.quiet ?? false);
  const controller = new AbortController();
  const signals = onStopSignals(() => Promise.resolve(controller.abort()));
  const young = new YoungGeneration();
  const old = new OldGeneration();
  const optimisation = new OptimisationBudget(
    [opts.resume, opts.rerunFailed, opts.compare, opts.output].some((flag) => flag !== undefined),
  );
  try {
    const { plan, summary, ran, detached } = await runEval({
      config,
      cwd,
      paths,
      flags: { ...opts, timeoutS: opts.timeout },
      env: process.env,
      dryRun: opts.dryRun ?? false,
      detach: opts.detach ?? false,
      signal: controller.signal,
      visitors: (dir) => rows.visitorsFor(dir),
      onTestLoaded: optimisation.testLoaded,
      onCompleted: (dir, rows) => say(`${dir}: ${rows} committed result(s) written from the store`),
      onPlan: (p) => {
        reportSelection(p);
        for (const warning of p.warnings) say(warning);
        if (opts.dryRun) return;
        if (p.requests.size === 0) say(`nothing to run: ${p.bundleDir} gets no new rows`);
      },
      onStart: (p) => {
        young.growTo(youngBytes(p.requests.size));
        old.follow();
        optimisation.start(p.requests.size);
        if (!opts.quiet) say(`run ${p.groupId}: ${p.requests.size} cases, max concurrency ${p.maxConcurrency}`);
      },
      onProgress: (p) => display.update(p),
      onWarning: (warning) => say(`warning: ${warning}`),
      wantsProgress: () => display.wantsUpdate(),
    });
    if (detached) {
      process.stdout.write(`${plan.groupId}\n`);
      say(`detached: \`proctor runs follow ${plan.groupId}\` re-attaches`);
      return exitCodes.ok;
    }
    if (!summary) {
      process.stdout.write(`${plan.requests.size} of ${plan.caseCount} case(s) would run\n`);
      return exitCodes.ok;
    }
    // The bundle decides: after a resume or rerun its latest rows, not just this command's, must pass the gate.
    const code = reportRun(summary, plan.bundleDir, report, rows);
    if (signals.received) return signalExitCode(signals.received);
    // Nothing selected: nothing failed in this command. A budget that ran out left cases undone: never a pass.
    return ran === 0 ? exitCodes.ok : summary.budget?.exhausted ? exitCodes.failed : code;
  } finally {
    rows.close();
    signals.dispose();
    young.dispose();
    old.dispose();
  }
};
