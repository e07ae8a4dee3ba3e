import { dirname } from 'node:path';
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

// Tests share their default_test assertions: each assertion's JSON is worked out once, not once per test.
const assertionJson = new WeakMap<AssertionSpec, string>();
const assertsJson = (asserts: readonly AssertionSpec[]): string =>
  asserts
    .map((a) => {
      let json = assertionJson.get(a);
      if (json === undefined) {
        json = stableJson(a);
        assertionJson.set(a, json);
      }
      return json;
    })
    .join(',');

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
      for (const promptSpec of spec.prompts) {
        const prompt = renderTemplate(promptSpec.text, test.vars);
        const promptPrint = fingerprintOf([prompt, test.vars, assertsJson(test.assert), test.threshold]);
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
