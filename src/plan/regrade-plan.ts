import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readResultText } from '../bundle/case-files.js';
import { latestRows } from '../bundle/latest-rows.js';
import type { IndexRow } from '../bundle/row.js';
import type { RegradeItem } from '../engine/regrade.js';
import { InputError } from '../errors.js';
import type { JsonObject } from '../records.js';
import { buildAssertion } from './assertion-spec.js';
import { assertionConfig, judgeRefs } from './compile-task.js';
import type { Env } from './env.js';
import { displayPath } from './files.js';
import { fingerprinter } from './fingerprint.js';
import { resolveJudges } from './judges.js';
import { loadEvalFile } from './load-eval.js';
import { expandMatrix, type PlannedCase } from './matrix.js';
import { attachPrices } from './prices.js';
import { renderAssertion } from './render-test.js';
import { selectBundle } from './select-bundle.js';
import type { Source } from './source.js';
import type { AssertionSpec, ProjectConfig, TargetSpec } from './spec.js';
import { checkAssertionTemplates } from './template-vars.js';
import { YamlSource } from './yaml-source.js';

export interface RegradeFlags {
  /** A YAML file holding a list of assertions, graded instead of each case's own. */
  assert?: string;
  /** The judge target for model-graded assertions, instead of the configured default. */
  judge?: string;
}

export interface RegradePlan {
  bundleDir: string;
  cases: RegradeItem[];
  /** Latest rows with no stored output to grade (the target never answered): kept out, and counted. */
  unavailable: IndexRow[];
  warnings: string[];
}

interface StoredStep {
  stepId: string;
  output: { text?: unknown; prompt?: unknown; durationMs?: unknown; target?: unknown } | null;
}

const storedOutput = (dir: string, row: IndexRow): RegradeItem['output'] | undefined => {
  const text = readResultText(dir, row);
  if (text === undefined) return undefined;
  let result: { steps?: StoredStep[] };
  try {
    result = JSON.parse(text) as { steps?: StoredStep[] };
  } catch {
    // A bundle from elsewhere may hold anything: a result that is not JSON has no output to grade.
    return undefined;
  }
  const prompt = result.steps?.find((s) => s.stepId === 'prompt')?.output;
  if (!prompt || typeof prompt.text !== 'string') return undefined;
  return {
    text: prompt.text,
    prompt: typeof prompt.prompt === 'string' ? prompt.prompt : '',
    durationMs: typeof prompt.durationMs === 'number' ? prompt.durationMs : 0,
    target: typeof prompt.target === 'string' ? prompt.target : row.identity.target,
  };
};

/** `--assert FILE`: a YAML list of assertions, each checked at its own position. */
const assertFile = (abs: string, file: string, config: ProjectConfig): { source: Source; list: AssertionSpec[] } => {
  if (!existsSync(abs))
    throw new InputError(`no such file: ${file}`, { file }, 'pass a YAML file holding a list of assertions');
  const source = YamlSource.parse(displayPath(abs, config.root), readFileSync(abs, 'utf8'));
  if (!Array.isArray(source.value))
    throw source.fail([], 'expected a list of assertions', 'write `- type: contains` items, as under `assert:`');
  return { source, list: source.value.map((a, i) => buildAssertion(source, [i], a, path.dirname(abs))) };
};

/** `--assert`'s assertions for one case: their templates read its vars, as an eval's own do (a missing one is refused). */
const assertionsFor = (file: { source: Source; list: AssertionSpec[] }, vars: JsonObject, test: string) => {
  const known = { names: new Set(Object.keys(vars)), what: `this assertion (for test "${test}")`, ownTest: true };
  return file.list.map((a, i) => {
    checkAssertionTemplates(file.source, [i], a, known);
    return renderAssertion(a, vars);
  });
};

/**
 * Picks the cases of a bundle to grade again from their stored outputs, never calling a target: each with its
 * eval's current assertions (or `--assert`'s), judged by `--judge` or the configured judge.
 */
export const planRegrade = (
  config: ProjectConfig,
  cwd: string,
  selector: string,
  flags: RegradeFlags,
  env: Env,
): RegradePlan => {
  const bundleDir = selectBundle(selector, config, cwd);
  const assertPath = flags.assert === undefined ? undefined : path.resolve(cwd, flags.assert);
  const file = assertPath === undefined ? undefined : assertFile(assertPath, flags.assert as string, config);
  const fromFile = file?.list;
  if (flags.judge !== undefined && !config.targets[flags.judge])
    throw new InputError(`--judge ${flags.judge}: no such target in proctor.toml`, undefined, 'name a [targets.NAME]');
  const judgeLabel = flags.judge ?? config.defaults.judge;
  const known = (extra: Record<string, TargetSpec>) => (label: string) => extra[label] ?? config.targets[label];
  const fileJudges = fromFile ? resolveJudges(fromFile, judgeLabel, known({})) : {};
  // Prices go onto the judge targets before any step config is built from them.
  const warnings = new Set(
    attachPrices(
      [...Object.values(fileJudges), ...(flags.judge ? [config.targets[flags.judge] as TargetSpec] : [])],
      config,
      env,
    ),
  );
  const byEval = new Map<string, Map<string, PlannedCase>>();
  const casesOf = (evalPath: string): Map<string, PlannedCase> => {
    let cases = byEval.get(evalPath);
    if (!cases) {
      const spec = loadEvalFile(path.join(config.root, evalPath), config, env);
      for (const w of attachPrices(Object.values(spec.judges), config, env)) warnings.add(w);
      cases = new Map(expandMatrix([spec], fingerprinter(config.root, env)).map((c) => [c.key, c]));
      byEval.set(evalPath, cases);
    }
    return cases;
  };
  // With --assert the eval only adds the case's vars, target and threshold: one that no longer loads is no loss.
  const plannedCase = (row: IndexRow): PlannedCase | undefined => {
    if (!fromFile) return casesOf(row.identity.eval).get(row.key);
    try {
      return casesOf(row.identity.eval).get(row.key);
    } catch {
      return undefined;
    }
  };
  const cases: RegradeItem[] = [];
  const unavailable: IndexRow[] = [];
  for (const row of latestRows(bundleDir).rows) {
    const output = storedOutput(bundleDir, row);
    const planned = plannedCase(row);
    if (!output || (!fromFile && !planned)) {
      unavailable.push(row);
      continue;
    }
    let asserts = file ? assertionsFor(file, planned?.vars ?? {}, row.identity.test) : (planned as PlannedCase).assert;
    let judges = fromFile ? fileJudges : (planned as PlannedCase).eval.judges;
    if (!fromFile && flags.judge !== undefined) {
      // The judged assertions re-pointed at --judge; their other keys as the eval has them.
      asserts = asserts.map((a) => (a.where ? { ...a, config: { ...a.config, judge: flags.judge as string } } : a));
      judges = resolveJudges(asserts, judgeLabel, known(judges));
    }
    const evalDir = assertPath ? path.dirname(assertPath) : (planned as PlannedCase).evalDir;
    cases.push({
      row,
      output,
      vars: planned?.vars ?? {},
      grading: {
        assert: asserts.map(assertionConfig),
        judges: judgeRefs(asserts, judges, config.root, planned?.target),
        baseDir: evalDir,
        threshold: planned?.threshold ?? 1,
        aggregate: 'weighted_average',
      },
    });
  }
  return { bundleDir, cases, unavailable, warnings: [...warnings] };
};
