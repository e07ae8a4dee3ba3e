import { join, resolve } from 'node:path';
import { newId } from '../ids.js';
import type { SubmitRequest } from '../runners/runner.js';
import { caseRequest } from './compile-task.js';
import { loadProjectConfig } from './config.js';
import type { Env } from './env.js';
import { loadEvalPaths } from './load-eval.js';
import { expandMatrix, type PlannedCase } from './matrix.js';
import type { ProjectConfig } from './spec.js';

export const defaultMaxConcurrency = 4;
export const defaultRetries = 2;

/** What a user may set on the command line; each wins over the eval file, which wins over proctor.toml. */
export interface EvalRunFlags {
  maxConcurrency?: number;
  retries?: number;
  repeat?: number;
  timeoutS?: number;
  /** Bundle directory; default `.proctor/results/<run_id>`. */
  output?: string;
}

export interface EvalRunPlan {
  config: ProjectConfig;
  /** The eval run's id: its cases' group, and its bundle's name. */
  groupId: string;
  bundleDir: string;
  maxConcurrency: number;
  cases: PlannedCase[];
  requests: SubmitRequest[];
}

export const resultsDir = (config: ProjectConfig): string => join(config.root, '.proctor', 'results');

/**
 * Loads and validates everything a run needs and compiles each case into its task. Throws InputError on bad
 * input before anything is written, so a bad file never leaves a half-made bundle or store record.
 */
export const planEvalRun = (cwd: string, paths: readonly string[], flags: EvalRunFlags, env: Env): EvalRunPlan => {
  const config = loadProjectConfig(cwd, env);
  const evals = loadEvalPaths(paths.length ? paths.map((p) => resolve(cwd, p)) : [resolve(cwd)], config, env);
  const cases = expandMatrix(evals, flags.repeat !== undefined ? { repeat: flags.repeat } : {});
  const declared = evals.map((e) => e.options.maxConcurrency).filter((n): n is number => n !== undefined);
  const maxConcurrency =
    flags.maxConcurrency ??
    (declared.length ? Math.max(...declared) : undefined) ??
    config.defaults.maxConcurrency ??
    defaultMaxConcurrency;
  const groupId = newId();
  const bundleDir = flags.output ? resolve(cwd, flags.output) : join(resultsDir(config), groupId);
  const groupLimit = { key: `group:${groupId}`, limit: maxConcurrency };
  const requests = cases.map((c) =>
    caseRequest(c, {
      groupId,
      bundleDir,
      attempt: 1,
      retries: flags.retries ?? c.eval.options.retries ?? config.defaults.retries ?? defaultRetries,
      timeoutS: flags.timeoutS ?? c.eval.options.timeoutS ?? config.defaults.timeoutS,
      limits: c.target.maxConcurrency
        ? [groupLimit, { key: `group:${groupId}:target:${c.target.label}`, limit: c.target.maxConcurrency }]
        : [groupLimit],
    }),
  );
  return { config, groupId, bundleDir, maxConcurrency, cases, requests };
};
