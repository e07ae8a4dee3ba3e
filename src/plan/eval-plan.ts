import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { PendingLatest } from '../bundle/latest-rows.js';
import { readSummary } from '../bundle/summary.js';
import { indexFile } from '../bundle/writer.js';
import { InputError } from '../errors.js';
import { newId } from '../ids.js';
import type { ConcurrencyLimit } from '../runners/runner.js';
import { CaseRequests } from './case-requests.js';
import { cassetteMode, cassetteRefs } from './cassette-plan.js';
import { caseRequest } from './compile-task.js';
import type { Env } from './env.js';
import { applyEvalFilters, type EvalFilters, givenVars } from './eval-filters.js';
import { displayPath } from './files.js';
import { fingerprinter } from './fingerprint.js';
import { loadEvalPaths } from './load-eval.js';
import { expandMatrix, LoadedPrints, type PlannedCase } from './matrix.js';
import { attachPrices, refuseUnpriced } from './prices.js';
import { type PriorResults, readPriorResults, startPriorRead } from './prior-results.js';
import { resultsDir, selectBundle, targetBundle } from './select-bundle.js';
import { type Selection, selectRerunFailed, selectResume } from './select-cases.js';
import type { EvalSpec, ProjectConfig } from './spec.js';

const defaultMaxConcurrency = 4;
const defaultRetries = 2;

/**
 * What a user may set on the command line; each wins over the eval file, which wins over proctor.toml. Except
 * `maxConcurrency`: it is the command's budget, and an eval file's own `max_concurrency` still caps that eval
 * inside it, as a target's cap does.
 */
export interface EvalRunFlags extends EvalFilters {
  maxConcurrency?: number;
  retries?: number;
  repeat?: number;
  timeoutS?: number;
  /** Bundle directory; default `.proctor/results/<run_id>`, or the bundle resumed. */
  output?: string;
  /** A run id, bundle directory or index.jsonl: skip its final cases, run the rest, append to it. */
  resume?: string;
  /** The same selectors: run exactly its failed and errored cases. */
  rerunFailed?: string;
  /** Let --resume keep results of cases whose prompt, vars, target or graders changed. */
  allowDrift?: boolean;
  /** `--cassette`: replay, record, record-missing or off (default: see cassetteMode). */
  cassette?: string;
  /** `--budget-usd`: what this command may spend on target and judge calls; replaces `[defaults] budget_usd`. */
  budgetUsd?: number;
}

/** How a plan loads its suite, besides what the command line says. */
export interface PlanOptions {
  /** Told of each test as it loads. */
  onTestLoaded?: (() => void) | undefined;
  /** How many JSONL tests the plan holds whole (load-tests.ts wholeJsonlTests by default); the rest by their line. */
  wholeTests?: number;
}

export interface EvalRunPlan {
  config: ProjectConfig;
  /** The eval run's id: its cases' group, and the name of a new bundle. */
  groupId: string;
  bundleDir: string;
  /** The bundle's own run id: this run's for a new bundle, the first run's for one appended to. */
  bundleRunId: string;
  /** The command's budget: most cases in flight at once, across every eval file. */
  maxConcurrency: number;
  /** How many cases the current suite has (the plan keeps only those left to submit, in `requests`). */
  caseCount: number;
  /** What `--resume` or `--rerun-failed` chose, when given; the cases it runs are `requests`. */
  selection?: PlanSelection;
  /** The selected cases' submit requests, built as the dispatcher takes them. */
  requests: CaseRequests;
  /** Things the user should know that do not stop the run (a model without a price). */
  warnings: string[];
  /** What this command may spend (USD, target and judge calls): dispatch stops before it could be exceeded. */
  budgetUsd?: number;
}

type PlanSelection = Omit<Selection, 'run'> & { mode: 'resume' | 'rerun-failed'; from: string; skippedLines: number };

const withoutRun = ({ run: _, ...rest }: PlanSelection & Pick<Selection, 'run'>): PlanSelection => rest;

/**
 * The concurrency limits each case holds while it runs: the command's budget, its eval's cap and its target's
 * cap (a target shared by several evals shares one cap). The runner starts a case only when every one has room.
 */
const limitLists = (
  evals: readonly EvalSpec[],
  budget: ConcurrencyLimit,
  evalCap: (spec: EvalSpec) => number,
  groupId: string,
): ((c: PlannedCase) => ConcurrencyLimit[]) => {
  const lists = new Map<EvalSpec, Map<string, ConcurrencyLimit[]>>();
  for (const spec of evals) {
    const cap = evalCap(spec);
    const own = cap < budget.limit ? [{ key: `group:${groupId}:eval:${spec.path}`, limit: cap }] : [];
    const byTarget = new Map<string, ConcurrencyLimit[]>();
    for (const t of spec.targets) {
      // Compared with the budget only: the target may serve other evals too, whose cases count against it.
      const target =
        t.maxConcurrency && t.maxConcurrency < budget.limit
          ? [{ key: `group:${groupId}:target:${t.label}`, limit: t.maxConcurrency }]
          : [];
      byTarget.set(t.label, [budget, ...own, ...target]);
    }
    lists.set(spec, byTarget);
  }
  return (c) => lists.get(c.eval)?.get(c.target.label) ?? [budget];
};

const evalPathsOf = (cases: readonly PlannedCase[]): string[] => [...new Set(cases.map((c) => c.eval.path))];

const describeCase = (c: PlannedCase): string => {
  const { identity } = c;
  return `${identity.eval} · ${identity.test} · ${identity.prompt} · ${identity.target}${identity.sample ? ` #${identity.sample}` : ''}`;
};

/** Reads the earlier bundle and picks the cases to run; refuses a resume whose cases changed underneath it. */
const selectFromPrior = (
  config: ProjectConfig,
  cwd: string,
  cases: PlannedCase[],
  flags: EvalRunFlags,
  started: PendingLatest | undefined,
): { selection: PlanSelection & Pick<Selection, 'run'>; prior: PriorResults } => {
  if (flags.resume && flags.rerunFailed) {
    throw new InputError('--resume and --rerun-failed cannot be combined', undefined, 'choose one of them');
  }
  const mode = flags.resume ? 'resume' : 'rerun-failed';
  // Found once: startPriorRead has the bundle, unless the selector named none (selectBundle then says why).
  const from = started?.dir ?? selectBundle((flags.resume ?? flags.rerunFailed) as string, config, cwd);
  const prior = readPriorResults(from, config.root, evalPathsOf(cases), started);
  const selection = mode === 'resume' ? selectResume(cases, prior) : selectRerunFailed(cases, prior);
  if (mode === 'resume' && selection.drifted.length && !flags.allowDrift) {
    const shown = selection.drifted.slice(0, 20).map((c) => `  ${describeCase(c)}`);
    const more = selection.drifted.length > 20 ? [`  … and ${selection.drifted.length - 20} more`] : [];
    throw new InputError(
      `${selection.drifted.length} case(s) changed since ${from} (prompt, vars, target config or graders):\n${[...shown, ...more].join('\n')}`,
      undefined,
      'resume with --allow-drift to keep their old results anyway, or start a new run',
    );
  }
  return { selection: { ...selection, mode, from, skippedLines: prior.skipped.length }, prior };
};

/**
 * Loads and validates everything a run of the project `config` needs and selects the cases (all, or those
 * `--resume` / `--rerun-failed` leave to run); each compiles into its task when the dispatcher takes it. Throws InputError on bad input before anything is written,
 * so a bad file never leaves a half-made bundle or store record.
 */
export const planEvalRun = (
  config: ProjectConfig,
  cwd: string,
  paths: readonly string[],
  flags: EvalRunFlags,
  env: Env,
  { onTestLoaded, wholeTests }: PlanOptions = {},
): EvalRunPlan => {
  // The earlier bundle's index is read on another thread while the suite loads.
  const started = startPriorRead(flags.resume ?? flags.rerunFailed, config, cwd);
  const fingerprints = fingerprinter(config.root, env);
  // A resume or rerun selects by fingerprint: each test's prints are worked out as it is loaded (a JSONL test is not
  // read back to expand the matrix). Any other plan works out a case's when its request is built.
  const loaded = new LoadedPrints(fingerprints, !(flags.resume || flags.rerunFailed));
  const evals = applyEvalFilters(
    // Vars `--var` sets are given to every test, so templates may read them.
    loadEvalPaths(paths.length ? paths.map((p) => resolve(cwd, p)) : [resolve(cwd)], config, env, {
      given: givenVars(flags),
      prints: loaded,
      onTest: onTestLoaded,
      wholeTests,
    }),
    flags,
  );
  const billed = evals.flatMap((e) => [...e.targets, ...Object.values(e.judges)]);
  const warnings = attachPrices(billed, config, env);
  const budgetUsd = flags.budgetUsd ?? config.defaults.budgetUsd;
  if (budgetUsd !== undefined) refuseUnpriced(billed, env);
  const cases = expandMatrix(evals, fingerprints, {
    loaded,
    ...(flags.repeat !== undefined ? { repeat: flags.repeat } : {}),
  });
  // Each case holds its test from here (these specs were loaded for this plan alone): without the specs' lists,
  // a test's vars and assertions are freed once its case has run, not kept to the end of a 100,000-case run.
  for (const spec of evals) spec.tests = [];
  // Shared by every case: the files all of them reference, as hashed for their fingerprints.
  const projectFiles = fingerprints.projectFiles();
  // An eval's own cap is what its file says, else the command's; the budget is the flag, else what lets every
  // eval reach its cap. The flag replaces proctor.toml's default, not a cap an eval file declares.
  const evalCap = (spec: EvalSpec): number =>
    spec.options.maxConcurrency ?? flags.maxConcurrency ?? config.defaults.maxConcurrency ?? defaultMaxConcurrency;
  const maxConcurrency = flags.maxConcurrency ?? Math.max(...evals.map(evalCap));
  const groupId = newId();
  const chosen = flags.resume || flags.rerunFailed ? selectFromPrior(config, cwd, cases, flags, started) : undefined;
  const selection = chosen?.selection;
  // A resume or rerun appends to the bundle it read, unless --output names another.
  const appendTo = selection && !flags.output ? selection.from : undefined;
  const bundleDir = targetBundle(flags, config, cwd) ?? join(resultsDir(config), groupId);
  // Attempts count on from the rows the bundle already holds (the one resumed, or an -o folder written
  // before), so a case's artifacts never overwrite an earlier attempt's.
  const written = appendTo
    ? chosen?.prior
    : existsSync(join(bundleDir, indexFile))
      ? readPriorResults(bundleDir, config.root, evalPathsOf(cases))
      : undefined;
  const bundleRunId = written ? (readSummary(bundleDir)?.run_id ?? basename(bundleDir)) : groupId;
  const attempts = written?.byKey;
  const groupLimit = { key: `group:${groupId}`, limit: maxConcurrency };
  // Built once per eval and target: a case only picks its list. A cap no tighter than the budget is left out.
  const limitsOf = limitLists(evals, groupLimit, evalCap, groupId);
  const bundle = displayPath(bundleDir, config.root);
  const toRun = selection?.run ?? cases;
  const cassetteOf = cassetteRefs(toRun, cassetteMode(flags.cassette, config.defaults.cassette, config.root, env));
  const requests = new CaseRequests(toRun, (c) =>
    caseRequest(c, {
      cassette: cassetteOf(c),
      groupId,
      bundle,
      root: config.root,
      attempt: (attempts?.get(c.key)?.rows ?? 0) + 1,
      retries: flags.retries ?? c.eval.options.retries ?? config.defaults.retries ?? defaultRetries,
      timeoutS: flags.timeoutS ?? c.eval.options.timeoutS ?? config.defaults.timeoutS,
      limits: limitsOf(c),
      projectFiles,
    }),
  );
  return {
    config,
    groupId,
    bundleDir,
    bundleRunId,
    maxConcurrency,
    caseCount: cases.length,
    // The cases to run go to `requests` alone, which lets each go once it is taken: the plan keeps none of them.
    ...(selection ? { selection: withoutRun(selection) } : {}),
    requests,
    warnings,
    ...(budgetUsd !== undefined ? { budgetUsd } : {}),
  };
};
