import { CanceledError, type ErrorRecord, ProctorError, toErrorRecord } from '../errors.js';
import type { Json, JsonObject } from '../records.js';
import type { JournalEntry, Store } from '../store/store.js';
import { applyOps } from './context.js';
import { defaultRetryPolicy, withRetries } from './retry.js';
import type { Services } from './services.js';
import { steps } from './steps/registry.js';
import type { StepDef } from './steps/step.js';
import type { RunRequest, StepSpec } from './task.js';

export interface StepRecord {
  stepId: string;
  status: 'completed' | 'failed' | 'skipped' | 'seeded';
  attempts: number;
  output: Json;
  error: ErrorRecord | null;
}

export interface TaskRunResult {
  status: 'COMPLETED' | 'FAILED' | 'CANCELED';
  context: JsonObject;
  error: ErrorRecord | null;
  steps: StepRecord[];
}

export interface TaskRunEnv {
  store: Store;
  services: Services;
  signal: AbortSignal;
  /** The instance's starting context and how many journal entries it already holds. */
  context: JsonObject;
  journalLength: number;
}

const stepDef = (type: string): StepDef => {
  const def = (steps as Record<string, StepDef>)[type];
  if (!def) throw new ProctorError('internal', `unknown step type "${type}"`);
  return def;
};

const dependencies = (spec: StepSpec, index: number, all: readonly StepSpec[]): string[] =>
  spec.dependsOn ?? all.slice(0, index).map((s) => s.id);

/** Runs one step to completion: retries retryable errors, and turns its own deadline into a `timeout` error. */
const runStep = async (
  spec: StepSpec,
  req: RunRequest,
  context: JsonObject,
  env: TaskRunEnv,
  record: StepRecord,
): Promise<{ ops: JournalEntry['ops']; output: Json }> => {
  const def = stepDef(spec.type);
  // The plan layer validated every step config when it built the task; parsing again per run is pure cost.
  const config = spec.config;
  return withRetries(
    defaultRetryPolicy(req.retries),
    env.signal,
    async () => {
      const deadline = spec.timeoutS ? AbortSignal.timeout(spec.timeoutS * 1000) : undefined;
      const signal = deadline ? AbortSignal.any([env.signal, deadline]) : env.signal;
      try {
        return await def.execute(config, {
          stepId: spec.id,
          runId: req.runId,
          context,
          vars: req.task.vars,
          signal,
          services: env.services,
        });
      } catch (error) {
        if (env.signal.aborted) throw new CanceledError();
        if (deadline?.aborted) throw new ProctorError('timeout', `step "${spec.id}" exceeded ${spec.timeoutS}s`);
        throw error;
      }
    },
    (attempt) => {
      record.attempts = attempt;
    },
  );
};

/**
 * Walks the task's DAG: a step starts once every step it depends on has completed, independent steps run
 * together, and each completion is journaled (its context change and output) before dependents start.
 */
export const runTask = async (req: RunRequest, env: TaskRunEnv): Promise<TaskRunResult> => {
  const specs = req.task.steps;
  const context = env.context;
  const records = new Map<string, StepRecord>(
    specs.map((s) => [s.id, { stepId: s.id, status: 'skipped', attempts: 0, output: null, error: null }]),
  );
  const done = new Set<string>();
  const startIndex = req.startStep ? specs.findIndex((s) => s.id === req.startStep) : 0;
  for (const spec of specs.slice(0, Math.max(0, startIndex))) {
    done.add(spec.id);
    (records.get(spec.id) as StepRecord).status = 'seeded';
  }
  let seq = env.journalLength;
  let failure: ErrorRecord | null = null;
  let canceled = false;
  const started = new Set<string>(done);
  const running = new Map<string, Promise<void>>();

  const launch = (spec: StepSpec): void => {
    started.add(spec.id);
    const record = records.get(spec.id) as StepRecord;
    const work = runStep(spec, req, context, env, record).then(async ({ ops, output }) => {
      const entry = { instanceId: req.instanceId, seq: ++seq, stepId: spec.id, attempt: record.attempts, ops, output };
      if (!(await env.store.appendJournal({ ...entry, createdAt: Date.now() }))) {
        throw new ProctorError('internal', `journal position ${entry.seq} of ${req.instanceId} is taken: stale run`);
      }
      applyOps(context, ops);
      record.status = 'completed';
      record.output = output;
      done.add(spec.id);
    });
    running.set(
      spec.id,
      work
        .catch((error: unknown) => {
          record.status = 'failed';
          if (error instanceof CanceledError || env.signal.aborted) {
            canceled = true;
            return;
          }
          record.error = toErrorRecord(error);
          if (spec.failTaskOnError === false) done.add(spec.id);
          else failure ??= record.error;
        })
        .finally(() => running.delete(spec.id)),
    );
  };

  for (;;) {
    if (!failure && !canceled) {
      specs.forEach((spec, index) => {
        if (!started.has(spec.id) && dependencies(spec, index, specs).every((d) => done.has(d))) launch(spec);
      });
    }
    if (running.size === 0) break;
    await Promise.race(running.values());
  }
  const status = canceled ? 'CANCELED' : failure ? 'FAILED' : 'COMPLETED';
  return { status, context, error: failure, steps: [...records.values()] };
};
