import { builtSteps, takeAsBuilt } from '../engine/step-config.js';
import type { RunRequest } from '../engine/task.js';
import type { ClaimedRun } from '../store/queue-ledger.js';
import type { SubmitRequest } from './runner.js';

/** The part of a request a worker cannot read from the run and its instance. */
export interface QueuedRequest {
  retries: number;
  case?: RunRequest['case'];
  /** The places of the task's steps whose configs the submitter built (step-config.ts); absent when none. */
  built?: number[];
}

/** What the submitter stores beside a run for the worker that executes it. */
export const queuedRequest = (r: SubmitRequest): QueuedRequest => {
  const built = builtSteps(r.task);
  return { retries: r.retries, ...(r.case ? { case: r.case } : {}), ...(built.length > 0 ? { built } : {}) };
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
