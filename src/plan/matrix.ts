import { dirname } from 'node:path';
import type { CaseIdentity, JsonObject } from '../records.js';
import type { Fingerprints } from './fingerprint.js';
import { caseKey, fingerprintOf } from './identity.js';
import { renderTest } from './render-test.js';
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

/** The steps a test adds around its prompt, workspace included; '' when none, so older fingerprints hold. */
const aroundPrint = (fingerprints: Fingerprints, spec: EvalSpec, test: TestSpec): string => {
  const steps = [...(spec.workspace ? [spec.workspace] : []), ...(test.before ?? []), ...(test.after ?? [])];
  return steps.length ? fingerprints.steps(steps) : '';
};

/**
 * Expands evals × tests × prompts × targets × samples. The prompt is rendered once per test and prompt, and
 * each fingerprint joins a per-(test, prompt) hash with a per-target one, so a 10,000-case matrix costs
 * a few hashes per case; `fingerprints` reads each referenced file once for the whole command.
 */
export const expandMatrix = (
  evals: readonly EvalSpec[],
  fingerprints: Fingerprints,
  options: MatrixOptions = {},
): PlannedCase[] => {
  const cases: PlannedCase[] = [];
  for (const spec of evals) {
    const evalDir = dirname(spec.file);
    const targetPrints = new Map(spec.targets.map((t) => [t.label, fingerprints.target(t)]));
    for (const written of spec.tests) {
      const test = renderTest(written);
      const samples = options.repeat ?? test.repeat * (spec.options.repeat ?? 1);
      const around = aroundPrint(fingerprints, spec, test);
      for (const promptSpec of spec.prompts) {
        const prompt = renderTemplate(promptSpec.text, test.vars);
        const promptPrint = fingerprintOf([
          prompt,
          test.vars,
          fingerprints.assertions(test.assert, evalDir),
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
