import type { z } from 'zod';
import { ancestors } from '../engine/dag.js';
import { steps as stepDefs, stepKinds } from '../engine/steps/registry.js';
import type { StepDef } from '../engine/steps/step.js';
import type { StepSpec } from '../engine/task.js';
import type { JsonObject } from '../records.js';
import { isRecord } from '../records.js';
import { renderTemplate } from '../template.js';
import { buildAssertion } from './assertion-spec.js';
import { assertionConfig, judgeRefs, targetRef } from './compile-task.js';
import type { Env } from './env.js';
import { displayPath } from './files.js';
import { resolveJudges } from './judges.js';
import { labelProblem } from './options.js';
import { attachPrices } from './prices.js';
import type { Path, Source } from './source.js';
import type { ProjectConfig, TargetSpec } from './spec.js';
import { didYouMean } from './suggest.js';
import { buildTarget } from './target-spec.js';
import { promptStepSchema, stepCommonKeys, stepCommonSchema, verifyStepSchema } from './task-schema.js';
import { objectSchema } from './zod-walk.js';

/** What compiling steps needs to know beyond the steps themselves. */
export interface StepScope {
  config: ProjectConfig;
  env: Env;
  /** Directory of the file: relative paths in steps resolve here. */
  baseDir: string;
  /** Template values of prompts: the vars, and `overrides` (`--set`). */
  templateVars: Record<string, unknown>;
  /** The target of prompt steps that name none; undefined: such a step is an error. */
  defaultTarget: TargetSpec | undefined;
}

/** A step type's schema with the keys every step has, for an error's hint of the keys a step may have. */
const withCommonKeys = (config: z.ZodType): z.ZodType => {
  const own = objectSchema(config);
  return own ? stepCommonSchema().extend(own.shape) : config;
};

/** A target as a step or a task names it: a label of proctor.toml or an inline mapping. */
export const resolveTarget = (source: Source, at: Path, raw: unknown, scope: StepScope): TargetSpec => {
  if (typeof raw === 'string') {
    const found = scope.config.targets[raw];
    if (!found)
      throw source.fail(
        at,
        `unknown target "${raw}"`,
        didYouMean(raw, Object.keys(scope.config.targets), 'targets in proctor.toml'),
      );
    return found;
  }
  const entry = raw as Record<string, unknown>;
  const label = typeof entry.label === 'string' ? entry.label : String(entry.kind);
  if (labelProblem(label))
    throw source.fail(at, `invalid target label ${JSON.stringify(label)}`, 'give the target a `label:` without spaces');
  return buildTarget(source, at, label, entry, scope.baseDir, scope.env, ['label']);
};

const compilePrompt = (source: Source, at: Path, rest: Record<string, unknown>, scope: StepScope): JsonObject => {
  const parsed = promptStepSchema().safeParse(rest);
  if (!parsed.success) throw source.zodError(parsed.error, at, withCommonKeys(promptStepSchema()));
  const target =
    parsed.data.target === undefined
      ? scope.defaultTarget
      : resolveTarget(source, [...at, 'target'], parsed.data.target, scope);
  if (!target)
    throw source.fail(
      at,
      'this prompt step has no target',
      'add `target:` here or at the top of the task, or pass --target NAME',
    );
  let prompt: string;
  try {
    prompt = renderTemplate(parsed.data.prompt, scope.templateVars);
  } catch (error) {
    throw source.fail(
      [...at, 'prompt'],
      `invalid template: ${(error as Error).message}`,
      'vars are written {{ name }}',
    );
  }
  attachPrices([target], scope.config, scope.env);
  return { target: targetRef(target, scope.config.root), prompt };
};

const compileVerify = (
  source: Source,
  at: Path,
  id: string,
  rest: Record<string, unknown>,
  scope: StepScope,
): JsonObject => {
  const parsed = verifyStepSchema().safeParse(rest);
  if (!parsed.success) throw source.zodError(parsed.error, at, withCommonKeys(verifyStepSchema()));
  const v = parsed.data;
  const asserts = v.assert.map((a, i) => buildAssertion(source, [...at, 'assert', i], a, scope.baseDir));
  const judges = resolveJudges(asserts, scope.config.defaults.judge, (label) => scope.config.targets[label]);
  attachPrices(Object.values(judges), scope.config, scope.env);
  return {
    verifierId: v.verifier_id ?? id,
    ...(v.input !== undefined ? { input: v.input } : {}),
    threshold: v.threshold,
    aggregate: v.aggregate,
    baseDir: displayPath(scope.baseDir, scope.config.root),
    test: id,
    assert: asserts.map(assertionConfig),
    judges: judgeRefs(asserts, judges, scope.config.root),
  };
};

/** One step mapping: common keys, then its type's own keys, each error at its own node. */
const compileStep = (source: Source, at: Path, raw: unknown, scope: StepScope): StepSpec => {
  if (!isRecord(raw)) throw source.fail(at, 'a step must be a mapping', 'write `- id: NAME` and `type: …`');
  const common = stepCommonSchema().safeParse(
    Object.fromEntries(Object.entries(raw).filter(([k]) => stepCommonKeys().includes(k))),
  );
  if (!common.success) throw source.zodError(common.error, at, stepCommonSchema());
  const c = common.data;
  if (!(stepKinds as string[]).includes(c.type))
    throw source.fail([...at, 'type'], `unknown step type "${c.type}"`, didYouMean(c.type, stepKinds, 'step types'));
  const rest = Object.fromEntries(Object.entries(raw).filter(([k]) => !stepCommonKeys().includes(k)));
  let config: JsonObject;
  if (c.type === 'prompt') config = compilePrompt(source, at, rest, scope);
  else if (c.type === 'verify') config = compileVerify(source, at, c.id, rest, scope);
  else {
    // Every other type's YAML keys are its engine config: a new type needs no edit here.
    const def: StepDef = stepDefs[c.type as keyof typeof stepDefs];
    const schema = def.config();
    const checked = schema.safeParse(rest);
    if (!checked.success) throw source.zodError(checked.error, at, withCommonKeys(schema));
    config = rest as JsonObject;
  }
  return {
    id: c.id,
    type: c.type,
    ...(c.depends_on ? { dependsOn: c.depends_on } : {}),
    ...(c.fail_task_on_error !== undefined ? { failTaskOnError: c.fail_task_on_error } : {}),
    ...(c.retry ? { retry: c.retry } : {}),
    ...(c.timeout_s !== undefined ? { timeoutS: c.timeout_s } : {}),
    baseDir: displayPath(scope.baseDir, scope.config.root),
    config,
  };
};

/**
 * Compiles a list of step mappings and checks the graph: ids unique, `depends_on` names only earlier steps,
 * `retry.from` is the step or one it depends on, and a verify step's `input` is a step it depends on.
 * `earlier` are steps that come before these (an eval test's prompt is after its `before` steps).
 */
export const compileSteps = (
  source: Source,
  at: Path,
  raw: readonly unknown[],
  scope: StepScope,
  earlier: readonly StepSpec[] = [],
): StepSpec[] => {
  const out: StepSpec[] = [...earlier];
  raw.forEach((entry, i) => {
    const where: Path = [...at, i];
    const step = compileStep(source, where, entry, scope);
    if (out.some((s) => s.id === step.id))
      throw source.fail(
        [...where, 'id'],
        `duplicate step id "${step.id}"`,
        'give each step a unique id (seeds included)',
      );
    const deps = step.dependsOn ?? out.map((s) => s.id);
    step.dependsOn?.forEach((d, j) => {
      if (!out.some((s) => s.id === d))
        throw source.fail(
          [...where, 'depends_on', j],
          `step "${step.id}" depends on "${d}", which is not an earlier step`,
          didYouMean(
            d,
            out.map((s) => s.id),
            'earlier steps',
          ),
        );
    });
    const upstream = new Set(deps.flatMap((d) => [...ancestors(out, d)]));
    if (step.retry && step.retry.from !== step.id && !upstream.has(step.retry.from))
      throw source.fail(
        [...where, 'retry', 'from'],
        `retry.from "${step.retry.from}" is neither this step nor one it depends on`,
        'name this step or an ancestor of it',
      );
    const input = step.type === 'verify' ? step.config.input : undefined;
    if (typeof input === 'string' && !upstream.has(input))
      throw source.fail(
        [...where, 'input'],
        `verify input "${input}" is not a step this one depends on`,
        'name an earlier step it depends on',
      );
    out.push(step);
  });
  return out.slice(earlier.length);
};
