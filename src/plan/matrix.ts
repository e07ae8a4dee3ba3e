import { dirname } from 'node:path';
import type { StepSpec } from '../engine/task.js';
import type { CaseIdentity, JsonObject } from '../records.js';
import { renderTemplate } from '../template.js';
import type { Fingerprints } from './fingerprint.js';
import { HeldTest } from './held-test.js';
import { caseKey, fingerprintOf } from './identity.js';
import { renderTest } from './render-test.js';
import type { AssertionSpec, EvalSpec, PromptMessage, PromptSpec, TargetSpec, TestSpec } from './spec.js';

/**
 * One cell of the matrix, ready to compile into a task. What its test, prompt, target and eval already hold
 * (identity, vars, assertions, threshold, the eval's folder) is read from them, not held again by each case:
 * a 100,000-case plan holds every case until it is taken.
 */
export class PlannedCase {
  readonly eval: EvalSpec;

  constructor(
    readonly key: string,
    /** The fingerprint, or how to work it out when first asked for (a plan that selects nothing by it). */
    private print: string | PrintRecipe,
    /** The prompt, rendered with `vars` when the case's request is built (renderedPrompt): not held per case. */
    readonly promptSpec: PromptSpec,
    readonly target: TargetSpec,
    /** As written (its templates not rendered): a JSONL test beyond the plan's first wholeJsonlTests is held by its line. */
    readonly test: TestSpec,
    readonly sample: number,
    spec: EvalSpec,
  ) {
    this.eval = spec;
  }

  /** A hash of everything that decides the case's result: its test with its prompt, and its target. */
  get fingerprint(): string {
    if (typeof this.print === 'string') return this.print;
    const test = this.rendered();
    return this.fingerprintFrom(test, renderPrompt(this.promptSpec, test.vars));
  }

  /**
   * The fingerprint, worked out (when it is on demand) from the test rendered and the prompt rendered with its vars,
   * as the case's request renders them anyway.
   */
  fingerprintFrom(test: TestSpec, prompt: RenderedPrompt): string {
    if (typeof this.print !== 'string') {
      const r = this.print;
      this.print = fingerprintOf([testPrinter(r.fingerprints, r.scope, test, r.judgePrint)(prompt), r.targetPrint]);
    }
    return this.print;
  }

  /** A new object on each read: take it once where it is used more than once. */
  get identity(): CaseIdentity {
    return identityOf(this.eval, this.test, this.promptSpec, this.target, this.sample);
  }

  /** The test as written, a held one read back: take it once where it is used more than once. */
  written(): TestSpec {
    return wholeTest(this.test);
  }

  /** The test with its templates rendered, built on each call: take it once where it is used more than once. */
  rendered(): TestSpec {
    return renderTest(this.written());
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

/**
 * A test with plain fields: a held one read back once, not once per field through its getters (each a lookup of
 * its line), and renderTest sees one shape of object.
 */
const wholeTest = (test: TestSpec): TestSpec => (test instanceof HeldTest ? test.whole : test);

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
  /** The tests' prints kept as they were loaded. */
  loaded?: LoadedPrints;
}

/** A prompt rendered with a test's vars: its text (a chat prompt's last user message) and a chat's messages. */
export interface RenderedPrompt {
  prompt: string;
  messages?: PromptMessage[];
}

export const renderPrompt = (spec: PromptSpec, vars: JsonObject): RenderedPrompt => ({
  prompt: renderTemplate(spec.text, vars),
  ...(spec.messages
    ? { messages: spec.messages.map((m) => ({ role: m.role, content: renderTemplate(m.content, vars) })) }
    : {}),
});

/** Where a test's prints are worked out: its eval's folder (graders' files), workspace and prompts. */
export interface PrintScope {
  evalDir: string;
  workspace?: StepSpec | undefined;
  prompts: readonly PromptSpec[];
}

/** What expanding the matrix needs of a test besides its id: its samples and its print with each prompt, in order. */
interface TestPrints {
  repeat: number;
  prompts: string[];
}

/** The steps a test adds around its prompt, workspace included; '' when none, so older fingerprints hold. */
const aroundPrint = (fingerprints: Fingerprints, workspace: StepSpec | undefined, test: TestSpec): string => {
  const steps = [...(workspace ? [workspace] : []), ...(test.before ?? []), ...(test.after ?? [])];
  return steps.length ? fingerprints.steps(steps) : '';
};

/**
 * A rendered test's print with a prompt rendered with its vars: the prompt (then dropped: a case's request renders
 * it again, so a plan holds no rendered prompt), the test's vars, graders, threshold and steps, and `judgePrint`
 * when a model grades it.
 */
const testPrinter = (
  fingerprints: Fingerprints,
  scope: PrintScope,
  test: TestSpec,
  judgePrint: string,
): ((prompt: RenderedPrompt) => string) => {
  const around = aroundPrint(fingerprints, scope.workspace, test);
  const asserted = fingerprints.assertions(test.assert, scope.evalDir);
  const judged = judgePrint && test.assert.some((a) => a.where);
  return ({ prompt, messages }) =>
    fingerprintOf([
      messages ?? prompt,
      test.vars,
      asserted,
      test.threshold,
      ...(around ? [around] : []),
      ...(judged ? [judgePrint] : []),
    ]);
};

/** A test's print with each of its eval's prompts. */
const testPrints = (
  fingerprints: Fingerprints,
  scope: PrintScope,
  written: TestSpec,
  judgePrint: string,
): TestPrints => {
  const test = renderTest(wholeTest(written));
  const print = testPrinter(fingerprints, scope, test, judgePrint);
  return { repeat: test.repeat, prompts: scope.prompts.map((p) => print(renderPrompt(p, test.vars))) };
};

/** What works out a case's fingerprint when it is first asked for; one per eval and target. */
interface PrintRecipe {
  fingerprints: Fingerprints;
  scope: PrintScope;
  judgePrint: string;
  targetPrint: string;
}

/**
 * Tests' prints worked out as each is loaded, while its line is parsed anyway, so that expanding the matrix reads no
 * JSONL test back. Taken once each, by eval file and test id; what is left (tests a filter dropped) goes with this
 * object once the matrix is expanded. A test a model grades is left out: its print holds its eval's judges, known
 * only once every test is loaded.
 */
export class LoadedPrints {
  // A test's prints as a string when that is all there is (one prompt, one sample): a plan of 100,000 tests held
  // an object and a list besides each print (~240 B per test, 24 MB more peak RSS than expanding without them).
  private readonly byEval = new Map<string, Map<string, TestPrints | string>>();

  /**
   * `whenAsked`: no print is worked out as tests load, each case's only when it is asked for (as its request is
   * built), for a plan that selects nothing by them: the loading, which every case waits for, does not wait for
   * them (a 5,000-test dry run: 0.28 -> 0.20 s of CPU), and a case reads its test back once for both. Only what
   * expanding needs is kept: a test's samples when not 1.
   */
  constructor(
    private readonly fingerprints: Fingerprints,
    readonly whenAsked = false,
  ) {}

  /** What sees each test of the eval `file` (absolute) as loaded, whole, and keeps its prints. */
  keeper(file: string, scope: PrintScope): (test: TestSpec) => void {
    const byId = new Map<string, TestPrints | string>();
    this.byEval.set(file, byId);
    return (test) => {
      if (this.whenAsked) {
        // The files its graders name are hashed now, for the plan's project files (Fingerprints.projectFiles).
        if (test.assert.some((a) => a.references)) this.fingerprints.assertions(renderTest(test).assert, scope.evalDir);
        if (test.repeat !== 1) byId.set(test.id, { repeat: test.repeat, prompts: [] });
        return;
      }
      if (test.assert.some((a) => a.where)) return;
      const prints = testPrints(this.fingerprints, scope, test, '');
      const [only] = prints.prompts;
      byId.set(test.id, prints.repeat === 1 && prints.prompts.length === 1 && only !== undefined ? only : prints);
    };
  }

  take(file: string, test: TestSpec): TestPrints | undefined {
    const byId = this.byEval.get(file);
    const prints = byId?.get(test.id);
    byId?.delete(test.id);
    return typeof prints === 'string' ? { repeat: 1, prompts: [prints] } : prints;
  }
}

/**
 * Expands evals × tests × prompts × targets × samples. Each fingerprint joins a per-(test, prompt) hash with a
 * per-target one, so a 10,000-case matrix costs a few hashes per case; `fingerprints` reads each referenced file
 * once for the whole command. A test's per-prompt hashes are those `loaded` kept, else worked out here.
 */
export const expandMatrix = (
  evals: readonly EvalSpec[],
  fingerprints: Fingerprints,
  options: MatrixOptions = {},
): PlannedCase[] => {
  const cases: PlannedCase[] = [];
  for (const spec of evals) {
    const scope = { evalDir: dirname(spec.file), workspace: spec.workspace, prompts: spec.prompts };
    const targetPrints = new Map(spec.targets.map((t) => [t.label, fingerprints.target(t)]));
    // A judge's config decides grades too; only tests with a model-graded assertion carry its print.
    const judgeEntries = Object.entries(spec.judges).sort(([a], [b]) => (a < b ? -1 : 1));
    const judgePrint = judgeEntries.length
      ? fingerprintOf(judgeEntries.map(([label, t]) => [label, fingerprints.target(t)]))
      : '';
    const asked = options.loaded?.whenAsked === true;
    // Shared by every test's cases with the same prompt and target.
    const recipes: PrintRecipe[] = asked
      ? spec.targets.map((t) => ({ fingerprints, scope, judgePrint, targetPrint: targetPrints.get(t.label) as string }))
      : [];
    // Each case holds its test as written, rendered again when its request is built: a plan holds no rendered
    // copy of a test, and a held test only its place in its file.
    for (const test of spec.tests) {
      const kept = options.loaded?.take(spec.file, test);
      const prints = asked ? undefined : (kept ?? testPrints(fingerprints, scope, test, judgePrint));
      const samples = options.repeat ?? ((prints ?? kept)?.repeat ?? 1) * (spec.options.repeat ?? 1);
      // A loop, not a callback: a closure made per test and met by optimised code can keep its test alive.
      for (let p = 0; p < spec.prompts.length; p++) {
        const promptSpec = spec.prompts[p] as PromptSpec;
        for (let t = 0; t < spec.targets.length; t++) {
          const target = spec.targets[t] as TargetSpec;
          const print = prints
            ? fingerprintOf([prints.prompts[p], targetPrints.get(target.label)])
            : (recipes[t] as PrintRecipe);
          for (let sample = 0; sample < samples; sample++) {
            const key = caseKey(identityOf(spec, test, promptSpec, target, sample));
            cases.push(new PlannedCase(key, print, promptSpec, target, test, sample, spec));
          }
        }
      }
    }
  }
  return cases;
};
