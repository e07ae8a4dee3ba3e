import { dirname } from 'node:path';
import type { StepSpec } from '../engine/task.js';
import type { CaseIdentity, JsonObject } from '../records.js';
import type { TargetKind } from '../targets/registry.js';
import { redactTargetConfig } from '../targets/secrets.js';
import { caseKey, fingerprintOf, stableJson } from './identity.js';
import type { AssertionSpec, EvalSpec, TargetSpec, TestSpec } from './spec.js';
import { renderTemplate } from './template.js';

/** One cell of the matrix, ready to compile into a task. */
export interface PlannedCase {
  identity: CaseIdentity;
  key: string;
  fingerprint: string;
  /** The rendered prompt. */
  prompt: string;
  vars: JsonObject;
  target: TargetSpec;
  test: TestSpec;
  assert: AssertionSpec[];
  threshold: number;
  /** Directory of the eval file: graders' `file://` references resolve against it. */
  evalDir: string;
  eval: EvalSpec;
}

export interface MatrixOptions {
  /** `--repeat`: samples per case, replacing the eval's `repeat`. */
  repeat?: number;
}

/**
 * JSON of each item, worked out once per object: tests share their default_test assertions and steps, so a
 * large suite serialises each shared one once, not once per test.
 */
const jsonOnce = <T extends object>(view: (item: T) => unknown) => {
  const cache = new WeakMap<T, string>();
  return (items: readonly T[]): string =>
    items
      .map((item) => {
        let json = cache.get(item);
        if (json === undefined) {
          json = stableJson(view(item));
          cache.set(item, json);
        }
        return json;
      })
      .join(',');
};

const assertsJson = jsonOnce<AssertionSpec>((a) => a);
// `baseDir` is left out: it is absolute, and a fingerprint must be the same in every checkout (paths in
// steps stay as written).
const stepsJson = jsonOnce<StepSpec>(({ baseDir: _absolute, ...rest }) => rest);

/** The steps a test adds around its prompt, workspace included; '' when none, so older fingerprints hold. */
const aroundPrint = (spec: EvalSpec, test: TestSpec): string => {
  const steps = [...(spec.workspace ? [spec.workspace] : []), ...(test.before ?? []), ...(test.after ?? [])];
  return steps.length ? stepsJson(steps) : '';
};

/**
 * Expands evals × tests × prompts × targets × samples. The prompt is rendered once per test and prompt, and
 * each fingerprint joins a per-(test, prompt) hash with a per-target one, so a 10,000-case matrix costs
 * a few hashes per case.
 */
export const expandMatrix = (evals: readonly EvalSpec[], options: MatrixOptions = {}): PlannedCase[] => {
  const cases: PlannedCase[] = [];
  for (const spec of evals) {
    const evalDir = dirname(spec.file);
    const targetPrints = new Map(
      spec.targets.map((t) => [
        t.label,
        fingerprintOf({ kind: t.kind, config: redactTargetConfig(t.kind as TargetKind, t.config) }),
      ]),
    );
    for (const test of spec.tests) {
      const samples = options.repeat ?? test.repeat * (spec.options.repeat ?? 1);
      const around = aroundPrint(spec, test);
      for (const promptSpec of spec.prompts) {
        const prompt = renderTemplate(promptSpec.text, test.vars);
        const promptPrint = fingerprintOf([
          prompt,
          test.vars,
          assertsJson(test.assert),
          test.threshold,
          ...(around ? [around] : []),
        ]);
        for (const target of spec.targets) {
          const fingerprint = fingerprintOf([promptPrint, targetPrints.get(target.label)]);
          for (let sample = 0; sample < samples; sample++) {
            const identity = { eval: spec.path, test: test.id, prompt: promptSpec.id, target: target.label, sample };
            cases.push({
              identity,
              key: caseKey(identity),
              fingerprint,
              prompt,
              vars: test.vars,
              target,
              test,
              assert: test.assert,
              threshold: test.threshold,
              evalDir,
              eval: spec,
            });
          }
        }
      }
    }
  }
  return cases;
};
