import { CanceledError, type ErrorRecord, ProctorError, toErrorRecord } from '../errors.js';
import type { Json, JsonObject } from '../records.js';
import type { ContextOp, Store } from '../store/store.js';
import type { WorkspaceCapture } from '../workspaces/capture.js';
import { captureEntryId, captureWorkspaces } from './capture.js';
import { applyOps } from './context.js';
import { dependencies, span } from './dag.js';
import { Deadline } from './deadline.js';
import { JournalWriter, StaleCompletionError } from './journal.js';
import { redact } from './redact.js';
import { resourcesOf, resourcesPath, workspaceOf } from './resources.js';
import { defaultRetryPolicy, withRetries } from './retry.js';
import type { Services } from './services.js';
import { stepConfig } from './step-config.js';
import { steps } from './steps/registry.js';
import type { StepDef, StepResult } from './steps/step.js';
import { metadataKeys, type RunRequest, type StepSpec, workRootDir } from './task.js';
import { tearDown, teardownEntryId } from './teardown.js';
import { rollbackOps, type Undo, undoOf } from './undo.js';

/** How one step of a run ended; an eval case keeps these in its `result.json`. */
export interface StepRecord {
  stepId: string;
  status: 'completed' | 'failed' | 'skipped' | 'seeded';
  attempts: number;
  output: Json;
  error: ErrorRecord | null;
}

/** A walked task: its status, final context, first error and every step's record. */
export interface TaskRunResult {
  status: 'COMPLETED' | 'FAILED' | 'CANCELED';
  context: JsonObject;
  error: ErrorRecord | null;
  steps: StepRecord[];
  /** What each workspace held at the end, by the step that made it: taken before the slot was reset. */
  captures: Record<string, WorkspaceCapture>;
}

export interface TaskRunEnv {
  store: Store;
  services: Services;
  signal: AbortSignal;
  /** The instance's context so far (its stored start, with any journal replayed) and how many entries it holds. */
  context: JsonObject;
  journalLength: number;
  /**
   * The run is an eval case, whose result records every step (result.json): a completion is journaled only when it
   * records a resource, which `runs gc` and a teardown after a crash read. An eval case's prompt and verify cost no
   * write of their own; a crash before its finish loses nothing the run would keep, as it runs again whole.
   */
  recordedByResult?: boolean;
}

/** What a rollback journals as its output, so readers can tell it from a step's completion. */
export interface RollbackOutput {
  rollback: { from: string; to: string; span: string[]; retry: number };
}

const stepDef = (type: string): StepDef => {
  const def = (steps as Record<string, StepDef>)[type];
  if (!def) throw new ProctorError('internal', `unknown step type "${type}"`);
  return def;
};

const noDeadlines: readonly AbortSignal[] = [];

/** An op that records (or drops) a resource: its entry must be durable before the run goes on. */
const recordsResource = (op: ContextOp): boolean =>
  op.path === resourcesPath || op.path.startsWith(`${resourcesPath}.`);

const overridesOf = (metadata: JsonObject): Record<string, string> => {
  const raw = metadata[metadataKeys.userOverrides];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return {};
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, String(v)]));
};

/**
 * What a step's error becomes once a deadline stopped it: a `timeout`, unless the step already classified it as
 * something a retry would not cure (a grader that never returns is its grader's fault: grader_error).
 */
const afterDeadline = (spec: StepSpec, expired: AbortSignal, error: unknown): unknown => {
  if (error instanceof ProctorError && !error.retryable) return error;
  const why = expired.reason instanceof Error ? expired.reason.message : 'its deadline passed';
  return new ProctorError('timeout', `step "${spec.id}": ${why}`);
};

/**
 * Runs one step to completion: retries retryable errors, and turns a deadline (the step's own, or the task's
 * `timeout_s`) into a `timeout` error. A retry restarts the task's deadline: each attempt gets the full limit.
 */
const runStep = (
  spec: StepSpec,
  req: RunRequest,
  context: JsonObject,
  env: TaskRunEnv,
  record: StepRecord,
  taskDeadline: Deadline | undefined,
): Promise<StepResult> => {
  const def = stepDef(spec.type);
  const keep = req.metadata[metadataKeys.keep] === true;
  return withRetries(
    defaultRetryPolicy(req.retries),
    env.signal,
    async (attempt) => {
      if (attempt > 1) taskDeadline?.restart();
      const stepDeadline = spec.timeoutS ? new Deadline(spec.timeoutS, `step "${spec.id}"`) : undefined;
      const deadlines =
        taskDeadline || stepDeadline
          ? [taskDeadline?.signal, stepDeadline?.signal].filter((s) => s !== undefined)
          : noDeadlines;
      const signal = deadlines.length > 0 ? AbortSignal.any([env.signal, ...deadlines]) : env.signal;
      try {
        // A step launched after the deadline fired would never see its abort event.
        signal.throwIfAborted();
        return await def.execute(stepConfig(def, spec.config), {
          stepId: spec.id,
          runId: req.runId,
          instanceId: req.instanceId,
          context,
          vars: req.task.vars,
          overrides: overridesOf(req.metadata),
          workspace: workspaceOf(context),
          baseDir: env.services.projectPath(spec.baseDir ?? '.'),
          workRoot: env.services.projectPath(req.task.workRoot ?? workRootDir),
          keep,
          signal,
          services: env.services,
        });
      } catch (error) {
        if (env.signal.aborted) throw new CanceledError();
        const expired = deadlines.find((s) => s.aborted);
        throw expired ? afterDeadline(spec, expired, error) : error;
      } finally {
        stepDeadline?.dispose();
      }
    },
    (attempt) => {
      record.attempts = attempt;
    },
  );
};

/**
 * Walks the task's DAG: a step starts once every step it depends on has completed, independent steps run
 * together, and each completion is journaled (its context change and output, secrets redacted) before
 * dependents start. A step with `retry` that fails rolls the context back to before its span and re-runs it.
 * Whatever the run made is torn down at the end, unless `--keep` and the run ended on its own.
 */
export const runTask = async (req: RunRequest, env: TaskRunEnv): Promise<TaskRunResult> => {
  const specs = req.task.steps;
  const context = env.context;
  const secrets = env.services.secrets(req);
  const records = new Map<string, StepRecord>(
    specs.map((s) => [s.id, { stepId: s.id, status: 'skipped', attempts: 0, output: null, error: null }]),
  );
  const done = new Set<string>();
  const started = new Set<string>();
  /**
   * Per completed step, in the order they completed (a rolled-back step is deleted, so its re-run goes last): how
   * to undo it, for a rollback.
   */
  const undo = new Map<string, Undo>();
  // Only a step with `retry` rolls back: without one, no undo is ever read (an eval case has none).
  const mayRollBack = specs.some((s) => s.retry !== undefined);
  const rollbacks = new Map<string, number>();
  const writer = new JournalWriter(env.store, req.instanceId, env.journalLength, secrets);
  const journal = writer.append.bind(writer);
  let failure: ErrorRecord | null = null;
  let canceled = false;

  const startIndex = req.startStep ? specs.findIndex((s) => s.id === req.startStep) : 0;
  for (const spec of specs.slice(0, Math.max(0, startIndex))) {
    done.add(spec.id);
    started.add(spec.id);
    (records.get(spec.id) as StepRecord).status = 'seeded';
    await journal(spec.id, 0, [], { seeded: true });
  }

  const rollBack = async (spec: StepSpec): Promise<void> => {
    const retry = spec.retry as { from: string; max: number };
    const n = (rollbacks.get(spec.id) ?? 0) + 1;
    rollbacks.set(spec.id, n);
    const ids = span(specs, retry.from, spec.id);
    // Latest first.
    const completed = [...undo.keys()].filter((id) => ids.includes(id)).reverse();
    // What the span started must stop before its record goes: the re-run makes its own.
    const made = resourcesOf(context).filter(([id]) => ids.includes(id));
    await tearDown(made, context, env.services.workspaces);
    const ops = rollbackOps(
      context,
      completed.flatMap((id) => undo.get(id) ?? []),
    );
    const output: RollbackOutput = { rollback: { from: retry.from, to: spec.id, span: ids, retry: n } };
    await journal(spec.id, records.get(spec.id)?.attempts ?? 1, ops, output as unknown as Json);
    applyOps(context, ops);
    for (const id of ids) {
      done.delete(id);
      started.delete(id);
      undo.delete(id);
      const r = records.get(id) as StepRecord;
      Object.assign(r, { status: 'skipped', output: null, error: null });
    }
  };

  const canRetry = (spec: StepSpec): boolean =>
    spec.retry !== undefined && (rollbacks.get(spec.id) ?? 0) < spec.retry.max && !env.signal.aborted;

  /** Runs a step and records how it ended: completed (journaled), rolled back for a retry, or failed. */
  const execute = async (spec: StepSpec, record: StepRecord): Promise<void> => {
    try {
      const { ops, output, passed } = await runStep(spec, req, context, env, record, deadline);
      const reverse = mayRollBack ? undoOf(context, ops) : undefined;
      // The context and the record keep what the journal holds: the same values, secrets redacted once.
      const written =
        env.recordedByResult === true && !ops.some(recordsResource)
          ? writer.redacted(ops, output)
          : await journal(spec.id, record.attempts, ops, output);
      applyOps(context, written.ops);
      if (reverse) undo.set(spec.id, reverse);
      record.status = 'completed';
      record.output = written.output;
      if (passed === false && canRetry(spec)) await rollBack(spec);
      else done.add(spec.id);
    } catch (caught) {
      let error = caught;
      if (error instanceof CanceledError || env.signal.aborted) {
        record.status = 'failed';
        canceled = true;
        return;
      }
      if (canRetry(spec) && !(error instanceof StaleCompletionError)) {
        try {
          await rollBack(spec);
          return;
        } catch (rollbackError) {
          error = rollbackError;
        }
      }
      record.status = 'failed';
      record.error = redact(toErrorRecord(error), secrets);
      if (error instanceof ProctorError && error.detail.output !== undefined)
        record.output = redact(error.detail.output as Json, secrets);
      if (spec.failTaskOnError === false) done.add(spec.id);
      else failure ??= record.error;
    }
  };

  /** Each step in turn: every step waits for all before it and none rolls back (an eval case's). */
  const walkSequence = async (): Promise<void> => {
    for (const spec of specs) {
      if (failure || canceled) return;
      if (started.has(spec.id)) continue;
      started.add(spec.id);
      await execute(spec, records.get(spec.id) as StepRecord);
    }
  };

  /** Any DAG: a step starts once every step it waits for is done, independent steps together. */
  const walkDag = async (): Promise<void> => {
    const running = new Map<string, Promise<void>>();
    // Worked out once: the loop below asks after every step's completion.
    const waitsFor = specs.map((spec, index) => dependencies(spec, index, specs));
    const ready = (index: number): boolean => {
      for (const d of waitsFor[index] as string[]) if (!done.has(d)) return false;
      return true;
    };
    for (;;) {
      if (!failure && !canceled) {
        for (let index = 0; index < specs.length; index++) {
          const spec = specs[index] as StepSpec;
          if (started.has(spec.id) || !ready(index)) continue;
          started.add(spec.id);
          // One async function per step, not a chain of handlers: each link is a promise and a closure per case.
          running.set(
            spec.id,
            execute(spec, records.get(spec.id) as StepRecord).finally(() => running.delete(spec.id)),
          );
        }
      }
      if (running.size === 0) return;
      await Promise.race(running.values());
    }
  };

  // A sequence runs as the DAG's loop would run it, without its race of the running steps and a promise per step.
  const sequence = specs.every((s) => s.dependsOn === undefined && s.retry === undefined);
  // Started with the first step, and stopped before teardown: teardown runs whatever the time.
  const deadline = req.task.timeoutS ? new Deadline(req.task.timeoutS, 'the task') : undefined;
  try {
    await (sequence ? walkSequence() : walkDag());
  } finally {
    deadline?.dispose();
  }
  const held = resourcesOf(context);
  const status = canceled ? 'CANCELED' : failure ? 'FAILED' : 'COMPLETED';
  const keep = req.metadata[metadataKeys.keep] === true && status !== 'CANCELED';
  // Before teardown resets the slots; a canceled run is being stopped, not inspected.
  // Redacted here, once, like every other part of the result: the bundle writes captures as they are.
  const captures = status === 'CANCELED' || held.length === 0 ? {} : redact(await captureWorkspaces(held), secrets);
  if (Object.keys(captures).length > 0)
    await journal(captureEntryId, 1, [], { workspaces: captures } as unknown as Json).catch(() => {});
  if (keep) for (const [, r] of held) if (r.kind === 'workspace' && r.slot) env.services.workspaces.detach(r.slot);
  if (!keep && held.length > 0) {
    const ops = await tearDown(held, context, env.services.workspaces);
    // The store may be what failed; the resources are gone either way, and the run's status says why.
    await journal(teardownEntryId, 1, ops, { teardown: true }).catch(() => {});
    applyOps(context, ops);
  }
  return { status, context, error: failure, steps: [...records.values()], captures };
};
