import { builtSteps, takeAsBuilt } from '../engine/step-config.js';
import type { RunRequest } from '../engine/task.js';
import type { ErrorRecord } from '../errors.js';
import { packageInfo } from '../package-info.js';
import type { ClaimedRun } from '../store/queue-ledger.js';
import type { SubmitRequest } from './runner.js';

/** The part of a request a worker cannot read from the run and its instance. */
export interface QueuedRequest {
  retries: number;
  case?: RunRequest['case'];
  /** The places of the task's steps whose configs the submitter built (step-config.ts); absent when none. */
  built?: number[];
  /** The submitter's Proctor version; absent in runs queued before it was recorded. */
  proctor?: string;
}

/** What the submitter stores beside a run for the worker that executes it. */
export const queuedRequest = (r: SubmitRequest): QueuedRequest => {
  const built = builtSteps(r.task);
  return {
    retries: r.retries,
    ...(r.case ? { case: r.case } : {}),
    ...(built.length > 0 ? { built } : {}),
    proctor: packageInfo().version,
  };
};

/**
 * A `setup_failed` error when this process's Proctor is not the submitter's: a spec is read as the version that
 * wrote it meant it (its steps, assertions and their defaults), so another version could run a case otherwise.
 */
export const versionRefusal = (work: QueuedRequest): ErrorRecord | undefined => {
  const mine = packageInfo().version;
  if (work.proctor === undefined || work.proctor === mine) return undefined;
  return {
    kind: 'setup_failed',
    message:
      `this worker runs Proctor ${mine} and the run was submitted with Proctor ${work.proctor}; ` +
      'install the same Proctor version on every worker and on the machines that submit runs',
    retryable: false,
  };
};

/**
 * The run as its submitter gave it, from the claim alone: `${ENV}` in its targets resolves from this process.
 * The step configs the submitter built are taken as built, as the local runner takes them: the claim parsed
 * them from the store a moment ago, and parsing them by their schemas again would give the same values.
 */
export const requestOf = (runId: string, run: ClaimedRun, work: QueuedRequest): RunRequest => {
  const task = run.spec as unknown as RunRequest['task'];
  if (work.built) takeAsBuilt(task, work.built);
  return {
    runId,
    groupId: run.groupId,
    instanceId: run.instanceId,
    task,
    context: run.context,
    retries: work.retries,
    metadata: run.metadata,
    ...(run.target !== null ? { target: run.target } : {}),
    ...(work.case ? { case: work.case } : {}),
    ...(run.startStep !== null ? { startStep: run.startStep } : {}),
  };
};
