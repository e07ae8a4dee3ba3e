import { runEval } from '../api/run-eval.js';
import type { Env } from '../plan/env.js';
import type { ProjectConfig } from '../plan/spec.js';

export type StartResult = { ok: true; groupId: string } | { ok: false; message: string };

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Runs this server started and has not seen end: stopped (canceled, what ran kept) when the server closes. */
const running = new Set<AbortController>();

/**
 * Starts an eval run through the same library call as `proctor eval run` (runEval): the configured runner,
 * the bundle written from the store as cases commit. A queue runner's run is submitted and left to the fleet
 * (detached); a local runner's runs in this process, in the background, until it ends or the server stops.
 * Resolves once the run is in the store, with its id, or with why it could not start (bad input).
 */
export const startEvalRun = (
  config: ProjectConfig,
  env: Env,
  evals: readonly string[],
  targets: readonly string[],
): Promise<StartResult> =>
  new Promise((resolve) => {
    const controller = new AbortController();
    running.add(controller);
    runEval({
      config,
      cwd: config.root,
      paths: evals,
      flags: targets.length ? { filterTargets: `^(${targets.map(escapeRegex).join('|')})$` } : {},
      env,
      detach: config.runner.kind === 'queue',
      signal: controller.signal,
      onStart: (plan) => resolve({ ok: true, groupId: plan.groupId }),
    })
      .then(
        (result) => resolve({ ok: true, groupId: result.plan.groupId }),
        (error: unknown) => resolve({ ok: false, message: error instanceof Error ? error.message : String(error) }),
      )
      .finally(() => running.delete(controller));
  });

/** Stops the runs this server is executing (local runner): their committed cases stay, the rest are canceled. */
export const stopStartedRuns = (): void => {
  for (const controller of running) controller.abort();
};
