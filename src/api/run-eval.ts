import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { bundleGroups, recordGroup } from '../bundle/groups.js';
import { LatestFold } from '../bundle/latest-fold.js';
import { type BundleLock, lockBundle } from '../bundle/lock.js';
import type { RowVisitor } from '../bundle/row-visitor.js';
import { type Summary, SummaryTally, saveSummary, writeSummary } from '../bundle/summary.js';
import { BundleWriter, indexFile } from '../bundle/writer.js';
import { InputError } from '../errors.js';
import { submitWindow } from '../plan/case-requests.js';
import type { Env } from '../plan/env.js';
import { type EvalRunFlags, type EvalRunPlan, planEvalRun } from '../plan/eval-plan.js';
import { targetBundle } from '../plan/select-bundle.js';
import type { ProjectConfig } from '../plan/spec.js';
import { openRunner, warmRunner } from '../runners/open.js';
import { currentOwner, ownerProcessState } from '../runners/owner.js';
import type { Runner } from '../runners/runner.js';
import { sleep } from '../sleep.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import { BudgetDispatch } from './budget-dispatch.js';
import { follow, type Progress } from './follow.js';
import { completeBundle, Materialiser } from './materialise.js';
import { RefillPace } from './refill-pace.js';
import { stopOnAbort } from './stop-on-abort.js';

export interface RunEvalOptions {
  config: ProjectConfig;
  cwd: string;
  paths: readonly string[];
  flags: EvalRunFlags;
  env: Env;
  /** Plan and select only: nothing is locked, stored or written. */
  dryRun?: boolean;
  /** Submit every case and return, leaving the runs to a runner whose runs go on without this call (queue). */
  detach?: boolean;
  /** Stops the run: queued cases are canceled and running ones aborted; what was committed is kept. */
  signal?: AbortSignal;
  /** Told of each test as the plan loads it (a suite of 100,000 tests loads for seconds). */
  onTestLoaded?: () => void;
  /** The plan, once made and before anything runs. */
  onPlan?: (plan: EvalRunPlan) => void;
  /** The store is open and the first cases are about to be submitted. */
  onStart?: (plan: EvalRunPlan) => void;
  /** Rows a bundle appended to gained from the store before selecting (its last follower died midway). */
  onCompleted?: (dir: string, rows: number) => void;
  onProgress?: (progress: Progress) => void;
  /** Something about where the cases execute that the user should know (the queue's Redis may evict jobs). */
  onWarning?: (message: string) => void;
  /** Whether onProgress wants a full reading now; between them the follower only counts. */
  wantsProgress?: () => boolean;
  /**
   * Readers of the bundle (given its folder) given its latest rows with the summary: a report at the end of a run
   * needs no pass of its own. A run whose rows supersede none the bundle held asks for them before it starts and
   * gives them rows as they are written; if that cannot give exactly the latest rows (a row superseded one), or
   * for any other run, it asks for fresh ones and gives them the rows in one pass at the end.
   */
  visitors?: (bundleDir: string) => readonly RowVisitor[];
  /** How often the follower reads the store while runs go on (default 200 ms); the runs' end is read at once. */
  followIntervalMs?: number;
}

export interface RunEvalResult {
  plan: EvalRunPlan;
  /** The bundle's summary after the run; absent for a dry run. */
  summary?: Summary;
  /** How many cases this call ran (0: none was selected). */
  ran: number;
  /** The cases were submitted and left running (`detach`): `runs follow` and `results pull` take it from here. */
  detached?: boolean;
}

/** How long a submitter waits for its runner's word that runs ended before counting again anyway. */
const endedFallbackMs = 1000;

const lock = (dir: string): BundleLock => lockBundle(dir, currentOwner(), ownerProcessState);

/**
 * Submits the plan's cases to the configured runner a window ahead of what has finished, follows the store and
 * writes the bundle from committed results as they come, then once more from the first (nothing committed is
 * missing) before the summary.
 */
const runPlan = async (plan: EvalRunPlan, o: RunEvalOptions, store: Store): Promise<Summary> => {
  // The summary and the report fold the rows in as the materialiser appends them: the end of the run reads back none.
  const tally = new SummaryTally();
  const fold = foldsRows(plan)
    ? new LatestFold(plan.bundleDir, [tally, ...(o.visitors?.(plan.bundleDir) ?? [])])
    : undefined;
  const runner = openRunner(plan.config.runner, store, plan.maxConcurrency, plan.config.root);
  const stopping = stopOnAbort(runner, o.signal);
  const warned = warnAbout(runner, o.onWarning);
  // Before the first case is submitted: a follower killed from here on leaves its group for the next one.
  recordGroup(plan.bundleDir, plan.groupId);
  const materialiser = new Materialiser(store, plan.groupId, plan.bundleDir, true, (lines) => fold?.visitLines(lines));
  const budget = withBudget(plan) ? new BudgetDispatch(plan, runner, store) : undefined;
  o.onStart?.(plan);
  try {
    let submitFailure: unknown;
    const total = plan.requests.size;
    const window = submitWindow(plan.maxConcurrency);
    // Requests are built as they are submitted, and submitted only while fewer than a window are unfinished:
    // the plan, the runner and the store's queue hold that many at most, whatever the run's size.
    let sent = 0;
    const unfinished = async (): Promise<number> => (sent === 0 ? 0 : store.countActive(plan.groupId));
    const submitted = (async () => {
      if (budget) return budget.submit(o.signal);
      const pace = new RefillPace();
      while (sent < total && !o.signal?.aborted) {
        const left = await unfinished();
        if (left > window / 2) {
          const excess = left - window / 2;
          // A runner whose runs execute here says when enough have ended. Counting on a timer must guess, and a
          // guess made long by a dry spell (few ended because nothing was left to run) leaves the runner idle
          // again. Its fallback wakes the count for ends it does not see (a cancel from another process).
          // A stop must not wait out the pause.
          await (runner.ended
            ? runner.ended(excess, endedFallbackMs)
            : sleep(pace.next(sent - left, excess, Date.now()), o.signal)
          ).catch(() => {});
          continue;
        }
        // The first batch is what may start at once: the first cases start after a transaction of that many, not
        // of half a window (100 at least), and the rest follow at once.
        const batch = plan.requests.take(sent === 0 ? Math.min(plan.maxConcurrency, window / 2) : window / 2);
        await runner.submitMany(batch);
        sent += batch.length;
      }
    })().catch(async (error: unknown) => {
      submitFailure = error;
      await stopping.stop();
    });
    const ended = runner.ended?.bind(runner);
    // A stopping runner's `ended` resolves at once: the follower then waits out its interval, not a busy loop.
    const halted = (): boolean => o.signal?.aborted === true || submitFailure !== undefined;
    await follow(store, plan.groupId, total, {
      intervalMs: o.followIntervalMs ?? 200,
      // The runs not yet submitted count as unfinished; the submitted ones are read as an index range of the
      // unfinished, as long as the window, rather than a count of every finished run.
      // Under a budget the dispatch submits case by case and records the rest as not started: counted as stored.
      countFinished: budget ? undefined : async () => sent - (await unfinished()),
      onProgress: o.onProgress ?? (() => {}),
      wantsProgress: o.wantsProgress ?? (() => false),
      stopped: stopping.stopped,
      rateLimited: () => runner.rateLimited?.() ?? Promise.resolve([]),
      ...(ended ? { waitEnded: (left: number, ms: number) => (halted() ? sleep(ms) : ended(left, ms)) } : {}),
      beforeReading: async () => {
        await materialiser.pull();
      },
    });
    await submitted;
    if (submitFailure) throw submitFailure;
    await warned;
    await runner.stop();
    await materialiser.complete();
    const spend = await budget?.report();
    const facts = fold?.end();
    // Without a fold, or an inexact one (a row superseded one it had given the visitors), a pass over the bundle.
    return facts
      ? saveSummary(plan.bundleDir, tally.summary(plan.bundleRunId, facts, spend))
      : writeSummary(plan.bundleDir, plan.bundleRunId, spend, o.visitors?.(plan.bundleDir));
  } catch (error) {
    // A run that fails midway (its store lost) still leaves the rows it could read and their summary.
    await warned;
    await runner.stop();
    await materialiser.complete().catch(() => 0);
    writeSummary(plan.bundleDir, plan.bundleRunId);
    throw error;
  } finally {
    stopping.dispose();
    // After a failure midway (a lost store) cases may still be running: they end before their store closes.
    await runner.stop();
    materialiser.close();
  }
};

/**
 * Whether the run's rows can be folded in as they are written, which holds while none supersedes a row the bundle
 * held: a new bundle holds none; a selection that runs none of the cases the bundle holds (`--resume` of final
 * rows) supersedes none. Any other run would read the bundle's rows at its start for nothing: a rerun of failures,
 * or a suite run again into its bundle, supersedes them.
 */
const foldsRows = (plan: EvalRunPlan): boolean => {
  const { selection } = plan;
  if (selection) return selection.found === selection.skipped;
  const index = join(plan.bundleDir, indexFile);
  return !existsSync(index) || statSync(index).size === 0;
};

/**
 * Tells `onWarning` what the runner warns about, asked beside the first submits rather than before them: a queue
 * runner's answer needs BullMQ loaded and Redis connected, which its first dispatch waits for anyway, while
 * recording the first cases waits for the store. Resolves once told; awaited before the runner stops.
 */
const warnAbout = (runner: Runner, onWarning: RunEvalOptions['onWarning']): Promise<void> =>
  (runner.warnings?.() ?? Promise.resolve([])).then(
    (warnings) => {
      for (const warning of warnings) onWarning?.(warning);
    },
    // A warning that cannot be read is only not shown: the submit and its dispatch report a Redis out of reach.
    () => {},
  );

const withBudget = (plan: EvalRunPlan): plan is EvalRunPlan & { budgetUsd: number } => plan.budgetUsd !== undefined;

/** `detach`: submits every case and leaves the runs going; refused for a runner whose runs end with this call. */
const detachPlan = async (plan: EvalRunPlan, o: RunEvalOptions, store: Store): Promise<void> => {
  const runner = openRunner(plan.config.runner, store, plan.maxConcurrency, plan.config.root);
  try {
    if (!runner.detach)
      throw new InputError(
        '--detach needs a runner whose runs go on without this command',
        undefined,
        'set [runner] kind = "queue" in proctor.toml and start `proctor worker` processes, or drop --detach',
      );
    const warned = warnAbout(runner, o.onWarning);
    recordGroup(plan.bundleDir, plan.groupId);
    const chunk = submitWindow(plan.maxConcurrency);
    try {
      for (let batch = plan.requests.take(chunk); batch.length > 0; batch = plan.requests.take(chunk))
        await runner.submitMany(batch);
    } finally {
      await warned;
    }
    await runner.detach();
  } finally {
    await runner.stop();
  }
};

/**
 * Nothing selected: no run is recorded. The bundle stays as it is (a torn tail cut off, the summary rebuilt),
 * and a new `--output` folder becomes a valid empty bundle.
 */
const runNothing = (plan: EvalRunPlan, visitors?: RunEvalOptions['visitors']): Summary => {
  const writer = new BundleWriter(plan.bundleDir);
  writer.open();
  writer.close();
  return writeSummary(plan.bundleDir, plan.bundleRunId, undefined, visitors?.(plan.bundleDir));
};

/**
 * An eval run, as `proctor eval run` does it: completes the bundle it appends to from the store, plans and
 * selects, submits every case to the configured runner, follows the store while writing the bundle from
 * committed results, and summarises it. The call is the one writer of its bundle from before the plan reads
 * it until it returns. Bad input throws InputError before anything is written.
 */
export const runEval = async (o: RunEvalOptions): Promise<RunEvalResult> => {
  // Locked before planning: a selection read while another command appends would run the cases it finishes.
  const known = o.dryRun ? undefined : targetBundle(o.flags, o.config, o.cwd);
  let held = known === undefined ? undefined : lock(known);
  let store: Store | undefined;
  try {
    if (known !== undefined && bundleGroups(known).length > 0) {
      // Before selecting: cases a killed follower's run committed count as run, and are not run again.
      store = await openStore(o.config.store);
      const rows = await completeBundle(store, known);
      if (rows > 0) o.onCompleted?.(known, rows);
    }
    const plan = planEvalRun(o.config, o.cwd, o.paths, o.flags, o.env, { onTestLoaded: o.onTestLoaded });
    if (o.detach && withBudget(plan))
      throw new InputError(
        'a detached run (--detach, or the explorer starting one on the queue runner) cannot keep a budget: the command that follows the run dispatches within it',
        undefined,
        'run `proctor eval run` without --detach, or without --budget-usd / [defaults] budget_usd',
      );
    o.onPlan?.(plan);
    if (o.dryRun) return { plan, ran: 0 };
    held ??= lock(plan.bundleDir);
    if (plan.requests.size === 0) return { plan, summary: runNothing(plan, o.visitors), ran: 0 };
    warmRunner(plan.config.runner);
    store ??= await openStore(plan.config.store);
    const ran = plan.requests.size;
    if (o.detach) {
      await detachPlan(plan, o, store);
      return { plan, ran, detached: true };
    }
    return { plan, summary: await runPlan(plan, o, store), ran };
  } finally {
    await store?.close();
    held?.release();
  }
};
