import type { CaseIdentity, JsonObject } from '../records.js';
import type { CassetteRef } from './cassette-scope.js';

/** Where runs make their workspaces and service logs, relative to the project root. */
export const workRootDir = '.proctor/work';

/** One step of a task as plain data: the kind's own keys sit in `config`. */
export interface StepSpec {
  id: string;
  type: string;
  /** Absent: after every earlier step. */
  dependsOn?: string[];
  /** Default true: an error in this step fails the task. */
  failTaskOnError?: boolean;
  timeoutS?: number;
  /** After an error (or a failed verification), roll back to step `from` and re-run that span, at most `max` times. */
  retry?: { from: string; max: number };
  /**
   * Directory of the file that declared the step, relative to the project root (the executing process's): its
   * relative paths (template, module) resolve here. Never absolute, so any checkout of the project can run it.
   */
  baseDir?: string;
  config: JsonObject;
}

/** A DAG of steps: what every run executes, and what every eval case compiles into. */
export interface TaskSpec {
  id: string;
  description?: string;
  vars: JsonObject;
  steps: StepSpec[];
  /**
   * Bounds the whole run, every step included (an eval case's `timeout_s`: setup, prompt, grading, after
   * steps); a step retried after a retryable error starts it again, so each attempt gets the full limit.
   */
  timeoutS?: number;
  /** Where workspaces and service logs are made, relative to the project root (default `workRootDir`). */
  workRoot?: string;
}

/** An eval case riding on a run: what identifies it and which execution of it this is. */
export interface CaseSpec {
  identity: CaseIdentity;
  key: string;
  fingerprint: string;
  /** 1-based: this execution's number among the bundle's rows for the key (its artifact folder). */
  attempt: number;
  /** The verifier whose result decides the case. */
  verifierId: string;
  /**
   * Content hashes, by root-relative path, of the project files the command's cases reference (agents,
   * graders, templates) as they were at submit: a worker in another checkout refuses to run against others.
   */
  projectFiles?: Record<string, string>;
  /** `--cassette`: where this case's model calls are recorded (relative to the project root) and how. */
  cassette?: CassetteRef;
}

/** Everything a runner needs to execute one run; plain data, so it can cross a queue. */
export interface RunRequest {
  runId: string;
  groupId: string;
  instanceId: string;
  task: TaskSpec;
  /** The instance's starting context, as stored with it. */
  context: JsonObject;
  /** Retries of a retryable step error (timeout, 429, 5xx, network, …). */
  retries: number;
  metadata: JsonObject;
  target?: string;
  case?: CaseSpec;
  startStep?: string;
}

/** Metadata keys the engine reads. */
export const metadataKeys = {
  /** `--set key=value` of `proctor task run`: steps read them as `ctx.overrides`. */
  userOverrides: 'user_overrides',
  /** The seeds of a `task run` instance: its index, the task file's seeds, `--seed`. Redaction reads them. */
  seeds: 'seeds',
  /** `--keep`: a run that ends on its own leaves its workspaces and services up for the CLI to hold. */
  keep: 'keep',
} as const;
