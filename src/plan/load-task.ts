import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { TaskSpec } from '../engine/task.js';
import { InputError } from '../errors.js';
import type { JsonObject } from '../records.js';
import { isRecord } from '../records.js';
import type { Env } from './env.js';
import { displayPath } from './files.js';
import { parsedOnce } from './parse-once.js';
import { type Seeds, substituteSeeds } from './seeds.js';
import type { Source } from './source.js';
import type { ProjectConfig, TargetSpec } from './spec.js';
import { didYouMean } from './suggest.js';
import { type TaskShape, taskShapeSchema } from './task-schema.js';
import { compileSteps, resolveTarget, type StepScope } from './task-steps.js';
import { YamlSource } from './yaml-source.js';

/** A `*.task.yaml` read and shape-checked, before seeds make instances of it. */
export interface LoadedTask {
  file: string;
  display: string;
  source: Source;
  shape: TaskShape;
}

export const readTaskFile = (file: string, config: ProjectConfig): LoadedTask => {
  const abs = path.resolve(file);
  const isFile = (() => {
    try {
      return statSync(abs).isFile();
    } catch {
      return false;
    }
  })();
  if (!isFile) throw new InputError(`no such task file: ${file}`, { file }, 'pass a *.task.yaml file');
  const display = displayPath(abs, config.root);
  const source = YamlSource.parse(display, readFileSync(abs, 'utf8'));
  if (!isRecord(source.value))
    throw source.fail([], 'a task file must be a mapping', 'start with `id:` and `steps:` (see examples/tasks/)');
  const shape = taskShapeSchema().safeParse(source.value, parsedOnce);
  if (!shape.success) throw source.zodError(shape.error, [], taskShapeSchema());
  return { file: abs, display, source, shape: shape.data };
};

export interface TaskInstanceOptions {
  seeds: Seeds;
  /** `--target NAME`: the target of prompt steps that name none, over the task's `target:`. */
  target?: string;
  overrides: Readonly<Record<string, string>>;
}

const defaultTarget = (
  task: LoadedTask,
  shape: TaskShape,
  scope: StepScope,
  o: TaskInstanceOptions,
): TargetSpec | undefined => {
  const declared = Object.keys(scope.config.targets);
  if (o.target !== undefined) {
    const found = scope.config.targets[o.target];
    if (!found)
      throw new InputError(
        `unknown target "${o.target}"`,
        undefined,
        didYouMean(o.target, declared, 'targets in proctor.toml'),
      );
    return found;
  }
  if (shape.target !== undefined) return resolveTarget(task.source, ['target'], shape.target, scope);
  return declared.length === 1 ? scope.config.targets[declared[0] as string] : undefined;
};

/**
 * One instance of a task: its seeds substituted into every string (ids and verifier ids included), then
 * every step compiled and the graph checked. Throws InputError at the offending node of the file.
 */
export const compileTaskInstance = (
  task: LoadedTask,
  config: ProjectConfig,
  env: Env,
  o: TaskInstanceOptions,
): TaskSpec => {
  // `seeds:` itself is what is substituted, not a place to substitute into.
  const source = substituteSeeds(task.source, o.seeds, ['seeds']);
  const shape = taskShapeSchema().parse(source.value, parsedOnce);
  const vars = (shape.vars ?? {}) as JsonObject;
  const scope: StepScope = {
    config,
    env,
    baseDir: path.dirname(task.file),
    templateVars: { ...vars, overrides: o.overrides },
    defaultTarget: undefined,
  };
  scope.defaultTarget = defaultTarget({ ...task, source }, shape, scope, o);
  return {
    id: shape.id,
    ...(shape.description !== undefined ? { description: shape.description } : {}),
    vars,
    steps: compileSteps(source, ['steps'], shape.steps, scope),
  };
};
