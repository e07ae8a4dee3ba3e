import { dirname } from 'node:path';
import type { CaseIdentity, JsonObject, Message } from '../records.js';
import { renderTemplate } from '../template.js';
import type { Fingerprints } from './fingerprint.js';
import { caseKey, fingerprintOf } from './identity.js';
import { renderTest } from './render-test.js';
import type { AssertionSpec, EvalSpec, PromptSpec, TargetSpec, TestSpec } from './spec.js';

/**
 * One cell of the matrix, ready to compile into a task. What its test, prompt, target and eval already hold
 * (identity, vars, assertions, threshold, the eval's folder) is read from them, not held again by each case:
 * a 100,000-case plan holds every case until it is taken.
 */
export class PlannedCase {
  readonly eval: EvalSpec;

  constructor(
    readonly key: string,
    readonly fingerprint: string,
    /** The prompt, rendered with `vars` when the case's request is built (renderedPrompt): not held per case. */
    readonly promptSpec: PromptSpec,
    readonly target: TargetSpec,
    /** As written (its templates not rendered): a JSONL file's test is held by its line (held-test.ts). */
    readonly test: TestSpec,
    readonly sample: number,
    spec: EvalSpec,
  ) {
    this.eval = spec;
  }

  /** A new object on each read: take it once where it is used more than once. */
  get identity(): CaseIdentity {
    return identityOf(this.eval, this.test, this.promptSpec, this.target, this.sample);
  }

  /** The test with its templates rendered, built on each call: take it once where it is used more than once. */
  rendered(): TestSpec {
    return renderTest(this.test);
  }

  get vars(): JsonObject {
    return this.test.vars;
  }

  get assert(): AssertionSpec[] {
    return this.rendered().assert;
  }

  get threshold(): number {
    return this.test.threshold;
  }

  /** Directory of the eval file: graders' `file://` references resolve against it. */
  get evalDir(): string {
    return dirname(this.eval.file);
  }
}

const identityOf = (
  spec: EvalSpec,
  test: TestSpec,
  prompt: PromptSpec,
  target: TargetSpec,
  sample: number,
): CaseIdentity => ({ eval: spec.path, test: test.id, prompt: prompt.id, target: target.label, sample });

export interface MatrixOptions {
  /** `--repeat`: samples per case, replacing the eval's `repeat`. */
  repeat?: number;
}

/** A prompt rendered with a test's vars: its text (a chat prompt's last user message) and a chat's messages. */
export const renderPrompt = (spec: PromptSpec, vars: JsonObject): { prompt: string; messages?: Message[] } => ({
  prompt: renderTemplate(spec.text, vars),
  ...(spec.messages
    ? { messages: spec.messages.map((m) => ({ role: m.role, content: renderTemplate(m.content, vars) })) }
    : {}),
});

/** The steps a test adds around its prompt, workspace included; '' when none, so older fingerprints hold. */
const aroundPrint = (fingerprints: Fingerprints, spec: EvalSpec, test: TestSpec): string => {
  const steps = [...(spec.workspace ? [spec.workspace] : []), ...(test.before ?? []), ...(test.after ?? [])];
  return steps.length ? fingerprints.steps(steps) : '';
};

/**
 * Expands evals × tests × prompts × targets × samples. The prompt is rendered once per test and prompt for the
 * fingerprint, then dropped: a case's request renders it again, so a 100,000-case plan holds no rendered prompt.
 * Each fingerprint joins a per-(test, prompt) hash with a per-target one, so a 10,000-case matrix costs a few
 * hashes per case; `fingerprints` reads each referenced file once for the whole command.
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
    // A judge's config decides grades too; only tests with a model-graded assertion carry its print.
    const judgeEntries = Object.entries(spec.judges).sort(([a], [b]) => (a < b ? -1 : 1));
    const judgePrint = judgeEntries.length
      ? fingerprintOf(judgeEntries.map(([label, t]) => [label, fingerprints.target(t)]))
      : '';
    // Each case holds its test as written, rendered again when its request is built: a plan holds no rendered
    // copy of a test, and a held test only its place in its file.
    for (const written of spec.tests) {
      const test = renderTest(written);
      const samples = options.repeat ?? test.repeat * (spec.options.repeat ?? 1);
      const around = aroundPrint(fingerprints, spec, test);
      const asserted = fingerprints.assertions(test.assert, evalDir);
      for (const promptSpec of spec.prompts) {
        const { prompt, messages } = renderPrompt(promptSpec, test.vars);
        const promptPrint = fingerprintOf([
          messages ?? prompt,
          test.vars,
          asserted,
          test.threshold,
          ...(around ? [around] : []),
          ...(judgePrint && test.assert.some((a) => a.where) ? [judgePrint] : []),
        ]);
        for (const target of spec.targets) {
          const fingerprint = fingerprintOf([promptPrint, targetPrints.get(target.label)]);
          for (let sample = 0; sample < samples; sample++) {
            const key = caseKey(identityOf(spec, test, promptSpec, target, sample));
            cases.push(new PlannedCase(key, fingerprint, promptSpec, target, written, sample, spec));
          }
        }
      }
    }
  }
  return cases;
};
