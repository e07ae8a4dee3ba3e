import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { StepSpec } from '../engine/task.js';
import { InputError } from '../errors.js';
import type { JsonObject, Message } from '../records.js';
import { isRecord } from '../records.js';
import { buildAssertion } from './assertion-spec.js';
import type { Env } from './env.js';
import { chatSchema, defaultTestSchema, evalShapeSchema, promptObjectSchema } from './eval-schema.js';
import { displayPath, isFileRef, readFileRef } from './files.js';
import { resolveJudges } from './judges.js';
import {
  draftTests,
  finishTests,
  type StepCompiler,
  type TestDefaults,
  type TestFinish,
  type WholeTests,
  wholeTests,
} from './load-tests.js';
import type { LoadedPrints, PrintScope } from './matrix.js';
import { labelProblem, toEvalOptions } from './options.js';
import { parsedOnce } from './parse-once.js';
import { isNativeEvalName, isPromptfooConfig, isPromptfooName, looksLikePromptfoo } from './promptfoo/detect.js';
import { translatePromptfoo } from './promptfoo/translate.js';
import type { Path, Source } from './source.js';
import type { EvalSpec, ProjectConfig, PromptSpec, TargetSpec, TestSpec } from './spec.js';
import { didYouMean } from './suggest.js';
import { buildTarget } from './target-spec.js';
import type { StepScope } from './task-steps.js';
import { checkTemplateVars, checkTestTemplates } from './template-vars.js';
import { compileAround, noSteps, workspaceStep } from './test-steps.js';
import { YamlSource } from './yaml-source.js';

/** What loading an eval file takes besides the file, for a plan. */
export interface LoadOptions {
  /** Vars `--var` sets in every test, so its templates may read them. */
  given?: JsonObject;
  /** Keeps each test's prints as it is loaded. */
  prints?: LoadedPrints;
  /** Told of each test as it is loaded: how far the loading of a large suite has got. */
  onTest?: (() => void) | undefined;
  /** How many JSONL tests the plan holds whole, shared by its files (load-tests.ts wholeJsonlTests by default). */
  wholeTests?: number | undefined;
}

/**
 * Loads one `*.eval.yaml`: every reference (file://, target label, assertion type, grader config) is resolved
 * and checked here, so a run never fails later for a reason the file could have said. Tests without an id
 * are named `t<N>` and prompts without one `p<N>`, N the 1-based position in the file.
 */
export const loadEvalFile = (file: string, config: ProjectConfig, env: Env, options: LoadOptions = {}): EvalSpec =>
  fromEvalFile(file, config, env, options, wholeTests(options.wholeTests));

/** loadEvalFile, its JSONL tests held whole while `whole` lasts (a plan's eval files share one). */
const fromEvalFile = (
  file: string,
  config: ProjectConfig,
  env: Env,
  { given = {}, prints, onTest }: LoadOptions,
  whole: WholeTests,
): EvalSpec => {
  const abs = path.resolve(file);
  const display = displayPath(abs, config.root);
  const dir = path.dirname(abs);
  const parsed = YamlSource.parse(display, readFileSync(abs, 'utf8'));
  const source = isPromptfooConfig(abs, parsed.value) ? translatePromptfoo(parsed, dir, config.root, env) : parsed;
  if (!isRecord(source.value)) {
    throw source.fail(
      [],
      'an eval file must be a mapping',
      'start with `prompts:` and `tests:` (see `proctor init` for an example)',
    );
  }
  const shape = evalShapeSchema.safeParse(source.value, parsedOnce);
  if (!shape.success) throw source.zodError(shape.error, [], evalShapeSchema);
  const doc = shape.data;

  // Steps of tests resolve paths against the eval file; prompt steps among them must name their target.
  const stepScope: StepScope = { config, env, baseDir: dir, templateVars: {}, defaultTarget: undefined };
  const workspace =
    doc.workspace === undefined
      ? undefined
      : workspaceStep(source, ['workspace'], doc.workspace, displayPath(dir, config.root));
  const lead = workspace ? [workspace] : [];
  const defaults = loadDefaultTest(source, doc.default_test, stepScope, lead);
  const around: StepCompiler = (draft, inherited) =>
    compileAround({ ...stepScope, templateVars: draft.vars }, draft.source, draft.path, draft, inherited, lead);
  const targets = loadTargets(source, doc.targets, config, dir, env);
  const declaredJudges = loadJudgeTargets(source, doc.judges, dir, env);
  const options = toEvalOptions(doc.evaluate_options);
  // What prompts and default_test may read: the vars some test gives.
  const known = new Set(Object.keys(given));
  const judges: Record<string, TargetSpec> = {};
  const judgeOf = (label: string) =>
    declaredJudges[label] ?? targets.find((t) => t.label === label) ?? config.targets[label];
  // Each test as it is finished, for a JSONL file's tests again when read back: they are not all held at once.
  const visit = (test: TestSpec): void => {
    for (const name in test.vars) known.add(name);
    for (const [label, judge] of Object.entries(
      resolveJudges(test.assert, options.judge ?? config.defaults.judge, judgeOf),
    ))
      judges[label] = judge;
  };
  // Read before the tests, so each test's prints are worked out as it is loaded; their templates are checked after.
  const prompts = loadPrompts(source, doc.prompts, dir);
  const scope: PrintScope = { evalDir: dir, workspace, prompts: prompts.map(([spec]) => spec) };
  const keep = prints?.keeper(abs, scope);
  const loaded =
    keep && onTest
      ? (test: TestSpec) => {
          keep(test);
          onTest();
        }
      : (keep ?? onTest);
  const finish: TestFinish = { defaults, compileSteps: around, given, visit, whole, ...(loaded ? { loaded } : {}) };
  const tests = finishTests(draftTests(source, doc.tests, dir, config.root), finish);
  // An empty list is refused by the schema; a file holding no test (a CSV header alone) reaches here.
  if (doc.tests !== undefined && tests.length === 0)
    throw source.fail(
      ['tests'],
      'tests: the file holds no test',
      'add at least one test to it (leave `tests:` out to run each prompt once)',
    );
  // No tests: the prompts run once each, with default_test's vars and assertions.
  if (doc.tests === undefined)
    tests.push(
      ...finishTests([{ source, path: [], vars: {}, assert: [], where: source.pos([]) }], {
        ...finish,
        compileSteps: undefined,
      }),
    );

  checkTestTemplates(
    source,
    ['default_test'],
    { ...(isRecord(doc.default_test) ? doc.default_test : {}), assert: defaults.assert },
    known,
    false,
  );
  return {
    file: abs,
    path: display,
    ...(doc.description !== undefined ? { description: doc.description } : {}),
    targets,
    prompts: prompts.map(([spec, templates]) => {
      for (const [at, text] of templates) checkTemplateVars(source, at, text, promptVars(known));
      return spec;
    }),
    tests,
    options,
    judges,
    ...(workspace ? { workspace } : {}),
  };
};

/**
 * Every eval file under `paths`, each once: a directory yields its `*.eval.yaml` / `*.eval.yml` and
 * `promptfooconfig.yaml` files (sorted), and the promptfoo configs directly in it under any name.
 */
export const loadEvalPaths = (
  paths: readonly string[],
  config: ProjectConfig,
  env: Env,
  options: LoadOptions = {},
): EvalSpec[] => {
  const files: string[] = [];
  for (const p of paths) {
    const abs = path.resolve(p);
    let stat: ReturnType<typeof statSync> | undefined;
    try {
      stat = statSync(abs);
    } catch {
      throw new InputError(
        `no such file or directory: ${p}`,
        { file: p },
        'pass an eval file (*.eval.yaml) or a directory holding some',
      );
    }
    const found = stat.isDirectory() ? findEvalFiles(abs) : [abs];
    if (found.length === 0)
      throw new InputError(
        `no *.eval.yaml files under ${p}`,
        { file: p },
        'name eval files NAME.eval.yaml (or promptfooconfig.yaml), or pass a file directly',
      );
    for (const f of found) if (!files.includes(f)) files.push(f);
  }
  const whole = wholeTests(options.wholeTests);
  return files.map((f) => fromEvalFile(f, config, env, options, whole));
};

// Never walk into dependencies, VCS data or Proctor's own results: they are not the user's evals.
const skippedDirs = new Set(['node_modules', '.git', '.proctor', 'dist']);

const findEvalFiles = (dir: string): string[] => {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) {
        if (!skippedDirs.has(entry.name) && !entry.name.startsWith('.')) walk(full);
      } else if (isNativeEvalName(entry.name) || isPromptfooName(entry.name)) out.push(full);
      else if (d === dir && /\.ya?ml$/.test(entry.name) && looksLikePromptfoo(full)) out.push(full);
    }
  };
  walk(dir);
  // Sorted by relative POSIX path so the order (and so the matrix order) is the same on every OS.
  return out.sort((a, b) => (displayPath(a, dir) < displayPath(b, dir) ? -1 : 1));
};

const loadDefaultTest = (source: Source, raw: unknown, scope: StepScope, lead: readonly StepSpec[]): TestDefaults => {
  if (raw === undefined) return { vars: {}, assert: [] };
  // Assertions are checked one by one by buildAssertion, which knows each kind's own keys.
  const schema = defaultTestSchema(z.unknown());
  const parsed = schema.safeParse(raw, parsedOnce);
  if (!parsed.success) throw source.zodError(parsed.error, ['default_test'], schema);
  const { vars, assert, threshold, before, after } = parsed.data;
  const steps = compileAround(scope, source, ['default_test'], { before, after }, noSteps, lead);
  return {
    steps,
    vars: (vars ?? {}) as JsonObject,
    assert: (assert ?? []).map((a, i) => buildAssertion(source, ['default_test', 'assert', i], a, scope.baseDir)),
    ...(threshold !== undefined ? { threshold } : {}),
  };
};

const loadTargets = (
  source: Source,
  raw: readonly unknown[] | undefined,
  config: ProjectConfig,
  dir: string,
  env: Env,
): TargetSpec[] => {
  const declared = Object.keys(config.targets);
  if (raw === undefined) {
    if (declared.length === 0) {
      throw source.fail(
        [],
        'no targets: the eval names none and proctor.toml declares none',
        'add `targets: [{kind: echo}]` here, or a [targets.NAME] table to proctor.toml',
      );
    }
    return Object.values(config.targets);
  }
  const out: TargetSpec[] = [];
  raw.forEach((entry, i) => {
    let spec: TargetSpec;
    if (typeof entry === 'string') {
      const found = config.targets[entry];
      if (!found) {
        const hint = declared.length
          ? didYouMean(entry, declared, 'targets in proctor.toml')
          : 'declare it as [targets.NAME] in proctor.toml, or write it inline as {kind: …}';
        throw source.fail(['targets', i], `unknown target "${entry}"`, hint);
      }
      spec = found;
    } else if (isRecord(entry)) {
      const label = entry.label === undefined ? entry.kind : entry.label;
      if (typeof label !== 'string' || labelProblem(label)) {
        throw source.fail(
          ['targets', i, entry.label === undefined ? 'kind' : 'label'],
          `invalid target label ${JSON.stringify(label)}`,
          'give the target a `label:` without spaces, or a `kind:` from the targets registry',
        );
      }
      spec = buildTarget(source, ['targets', i], label, entry, dir, env, ['label']);
    } else {
      throw source.fail(
        ['targets', i],
        'a target must be a label or a mapping',
        'write a name from proctor.toml, or `{kind: openai, model: …}`',
      );
    }
    if (out.some((t) => t.label === spec.label)) {
      throw source.fail(
        ['targets', i],
        `duplicate target "${spec.label}"`,
        'list each target once; give inline targets of the same kind distinct `label:`s',
      );
    }
    out.push(spec);
  });
  return out;
};

/** `judges:`: targets that grade model-graded assertions, declared in the eval by label, never under test. */
const loadJudgeTargets = (
  source: Source,
  raw: Readonly<Record<string, unknown>> | undefined,
  dir: string,
  env: Env,
): Record<string, TargetSpec> => {
  const out: Record<string, TargetSpec> = {};
  for (const [label, entry] of Object.entries(raw ?? {})) {
    const problem = labelProblem(label);
    if (problem)
      throw source.fail(
        ['judges', label],
        `judge label ${JSON.stringify(label)} ${problem}`,
        'use a name without spaces',
      );
    if (!isRecord(entry))
      throw source.fail(['judges', label], 'a judge is a target mapping', 'write `{kind: openai, model: …}`');
    out[label] = buildTarget(source, ['judges', label], label, entry, dir, env);
  }
  return out;
};

/** A prompt's templates may read the vars some test gives; one that does not parse is refused at its node. */
const promptVars = (known: ReadonlySet<string>) => ({ names: known, what: 'this prompt', ownTest: false });

/** A prompt, and its templates by where they are written: checked once every test has given its vars. */
type LoadedPrompt = [PromptSpec, [Path, string][]];

/** A chat prompt: each message's content a template; its text is the last user message. */
const chatPrompt = (source: Source, at: Path, id: string, raw: unknown): LoadedPrompt => {
  const parsed = chatSchema.safeParse(raw, parsedOnce);
  if (!parsed.success) throw source.zodError(parsed.error, at, chatSchema);
  const lastUser = parsed.data.findLast((m) => m.role === 'user') as Message;
  const templates = parsed.data.map((m, i): [Path, string] => [[...at, i, 'content'], m.content]);
  return [{ id, text: lastUser.content, messages: parsed.data }, templates];
};

const loadPrompts = (source: Source, raw: string | readonly unknown[], dir: string): LoadedPrompt[] => {
  const entries: [readonly (string | number)[], unknown][] =
    typeof raw === 'string' ? [[['prompts'], raw]] : raw.map((e, i) => [['prompts', i], e]);
  const out: LoadedPrompt[] = [];
  entries.forEach(([at, entry], i) => {
    let loaded: LoadedPrompt;
    const fallbackId = `p${i + 1}`;
    if (Array.isArray(entry)) loaded = chatPrompt(source, at, fallbackId, entry);
    else if (isRecord(entry) && 'messages' in entry) {
      const id = entry.id ?? fallbackId;
      if (typeof id !== 'string' || id === '')
        throw source.fail([...at, 'id'], 'a prompt id is a non-empty string', 'write `id: NAME`');
      const unknown = source.unknownKey(at, entry, ['id', 'messages']);
      if (unknown) throw unknown;
      loaded = chatPrompt(source, [...at, 'messages'], id, entry.messages);
    } else {
      let id = fallbackId;
      let text: string;
      let textAt = at;
      if (typeof entry === 'string') text = entry;
      else {
        const parsed = promptObjectSchema.safeParse(entry, parsedOnce);
        if (!parsed.success) throw source.zodError(parsed.error, at, promptObjectSchema);
        id = parsed.data.id ?? id;
        text = parsed.data.text;
        textAt = [...at, 'text'];
      }
      if (isFileRef(text)) text = readFileRef(source, textAt, text, dir).text;
      loaded = [{ id, text }, [[textAt, text]]];
    }
    const [spec] = loaded;
    if (out.some(([p]) => p.id === spec.id))
      throw source.fail(at, `duplicate prompt id "${spec.id}"`, 'give each prompt a unique id');
    out.push(loaded);
  });
  return out;
};
