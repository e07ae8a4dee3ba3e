import { readFileSync } from 'node:fs';
import path from 'node:path';
import { redact, runSecrets } from '../engine/redact.js';
import { metadataKeys, type TaskSpec } from '../engine/task.js';
import { InputError } from '../errors.js';
import { newId } from '../ids.js';
import type { JsonObject } from '../records.js';
import { isRecord } from '../records.js';
import { runnerKinds } from '../runners/registry.js';
import type { SubmitRequest } from '../runners/runner.js';
import { loadProjectConfig } from './config.js';
import type { Env } from './env.js';
import { compileTaskInstance, type LoadedTask, readTaskFile } from './load-task.js';
import { instanceSeeds, parseAssignments } from './seeds.js';
import type { Path } from './source.js';
import type { ProjectConfig } from './spec.js';
import { YamlSource } from './yaml-source.js';

/** What `proctor task run` takes from its command line. */
export interface TaskRunFlags {
  target?: string;
  k?: number;
  seed?: string[];
  set?: string[];
  contextJson?: string;
  startStep?: string;
  keep?: boolean;
  retries?: number;
}

export interface TaskRunPlan {
  config: ProjectConfig;
  groupId: string;
  tasks: TaskSpec[];
  requests: SubmitRequest[];
  keep: boolean;
}

/** A `--context-json` file: a bare context, or what `--output-dir` writes (`{context, start_step, keep, …}`). */
interface SavedContext {
  context: JsonObject;
  startStep?: string;
  keep?: boolean;
}

const readContextFile = (cwd: string, file: string): SavedContext => {
  let text: string;
  try {
    text = readFileSync(path.resolve(cwd, file), 'utf8');
  } catch {
    throw new InputError(
      `cannot read --context-json ${file}`,
      { file },
      'pass a JSON file, e.g. a context.json that --output-dir wrote',
    );
  }
  // JSON is YAML: parsing it this way gives a bad file's error a line and column.
  const source = YamlSource.parse(file, text);
  const value = source.value;
  if (!isRecord(value))
    throw source.fail([], 'a context file must hold a JSON object', 'write {"context": {…}} or a bare object');
  if (!isRecord(value.context)) return { context: value as JsonObject };
  const startStep = value.start_step;
  const keep = value.keep;
  return {
    context: value.context as JsonObject,
    ...(typeof startStep === 'string' ? { startStep } : {}),
    ...(typeof keep === 'boolean' ? { keep } : {}),
  };
};

/**
 * Ids are kept and shown in clear (the run index, the journal, progress lines, directory names), so a seed
 * holding a secret must not make one: refused at the id, with the secret left out of the message.
 */
const refuseSecretIds = (task: LoadedTask, t: TaskSpec, secrets: readonly string[]): void => {
  const ids: [Path, string][] = [[['id'], t.id]];
  t.steps.forEach((step, i) => {
    ids.push([['steps', i, 'id'], step.id]);
    const verifierId = step.config.verifierId;
    if (typeof verifierId === 'string' && verifierId !== step.id) ids.push([['steps', i, 'verifier_id'], verifierId]);
  });
  for (const [at, id] of ids)
    if (redact(id, secrets) !== id)
      throw task.source.fail(
        at,
        `id "${redact(id, secrets)}" would hold a secret value, and ids are stored and shown in clear`,
        'build ids from seeds that hold no secret, e.g. {{ seed.index }}',
      );
};

/**
 * Loads and checks everything `task run` needs and builds one request per instance (`--k`). Throws InputError
 * before anything is stored. A saved context rides on the request: the runner stores it with the run, in one
 * write, so a context that cannot be stored means nothing was submitted.
 */
export const planTaskRun = (cwd: string, file: string, flags: TaskRunFlags, env: Env): TaskRunPlan => {
  const config = loadProjectConfig(cwd, env);
  const task = readTaskFile(path.resolve(cwd, file), config);
  const fileSeeds = task.shape.seeds ?? [];
  const k = flags.k ?? Math.max(1, fileSeeds.length);
  const seeds = instanceSeeds(fileSeeds, parseAssignments('--seed', flags.seed ?? []), k);
  const overrides = parseAssignments('--set', flags.set ?? []);
  const saved = flags.contextJson !== undefined ? readContextFile(cwd, flags.contextJson) : undefined;
  // The command's own flags win over what the saved file says.
  const startStep = flags.startStep ?? saved?.startStep;
  const keep = flags.keep ?? saved?.keep ?? false;
  if (keep && runnerKinds[config.runner.kind].remote)
    throw new InputError(
      `--keep cannot be honoured by runner kind "${config.runner.kind}": the workspaces and services stay on the worker that ran the task`,
      undefined,
      'drop --keep, or run the task with [runner] kind = "local" (e.g. from a checkout with its own proctor.toml)',
    );
  if (startStep !== undefined && saved === undefined)
    throw new InputError(
      '--start-step needs --context-json',
      undefined,
      'pass the context the earlier steps made, e.g. a context.json from --output-dir',
    );
  const tasks = seeds.map((s) =>
    compileTaskInstance(task, config, env, { seeds: s, overrides, ...(flags.target ? { target: flags.target } : {}) }),
  );
  for (const t of tasks) {
    if (startStep !== undefined && !t.steps.some((s) => s.id === startStep))
      throw new InputError(
        `--start-step "${startStep}" is not a step of ${task.display}`,
        { file: task.display },
        `use one of: ${t.steps.map((s) => s.id).join(', ')}`,
      );
  }
  const groupId = newId();
  const requests = tasks.map(
    (t, i): SubmitRequest => ({
      groupId,
      task: t,
      context: saved?.context ?? {},
      retries: flags.retries ?? 0,
      metadata: {
        [metadataKeys.userOverrides]: overrides,
        [metadataKeys.keep]: keep,
        [metadataKeys.seeds]: { ...seeds[i] },
        task_file: task.display,
      },
      ...(startStep !== undefined ? { startStep } : {}),
    }),
  );
  for (const [i, r] of requests.entries()) refuseSecretIds(task, tasks[i] as TaskSpec, runSecrets(env, r));
  return { config, groupId, tasks, requests, keep };
};
