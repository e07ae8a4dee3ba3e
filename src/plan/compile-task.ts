import type { CassetteRef } from '../engine/cassette-scope.js';
import type { AssertionConfig } from '../engine/grade.js';
import { builtConfig } from '../engine/step-config.js';
import { steps } from '../engine/steps/registry.js';
import type { TargetRef } from '../engine/target-ref.js';
import type { TaskSpec } from '../engine/task.js';
import { takeAsChecked } from '../graders/assertion.js';
import type { JsonObject } from '../records.js';
import type { ConcurrencyLimit, SubmitRequest } from '../runners/runner.js';
import { displayPath } from './files.js';
import { selfJudge } from './judges.js';
import { type PlannedCase, type RenderedPrompt, renderPrompt } from './matrix.js';
import { renderTest } from './render-test.js';
import type { AssertionSpec, TargetSpec, TestSpec } from './spec.js';
import { casePromptStep, caseVerifyStep } from './test-steps.js';

const caseVerifier = 'main';

/** An assertion as a verify step's config carries it. */
export const assertionConfig = (a: AssertionSpec): AssertionConfig & JsonObject => ({
  kind: a.type,
  negate: a.negate,
  weight: a.weight,
  required: a.required,
  ...(a.id !== undefined ? { id: a.id } : {}),
  ...(a.threshold !== undefined ? { threshold: a.threshold } : {}),
  config: a.config,
});

// One ref per target and root: a plan's cases share it, so the runner knows its target by the object (services.ts),
// not by its JSON once per case.
const refsOf = new WeakMap<TargetSpec, { root: string; ref: TargetRef }>();

/**
 * A target as a step config carries it: raw config, its folder relative to the project `root` (a stored spec
 * names no path of this machine), and the price of its model when known.
 */
export const targetRef = (t: TargetSpec, root: string): TargetRef => {
  const known = refsOf.get(t);
  if (known?.root === root) return known.ref;
  const ref: TargetRef = {
    label: t.label,
    kind: t.kind,
    config: t.config,
    baseDir: displayPath(t.baseDir, root),
    ...(t.price ? { price: { ...t.price } } : {}),
  };
  refsOf.set(t, { root, ref });
  return ref;
};

/** The judge targets a verify step's assertions name, by label (`self`: the case's own target). */
export const judgeRefs = (
  asserts: readonly AssertionSpec[],
  judges: Readonly<Record<string, TargetSpec>>,
  root: string,
  self?: TargetSpec,
): Record<string, TargetRef> => {
  const out: Record<string, TargetRef> = {};
  for (const a of asserts) {
    const label = a.config.judge;
    if (typeof label !== 'string') continue;
    const target = label === selfJudge ? self : judges[label];
    if (target) out[label] = targetRef(target, root);
  }
  return out;
};

/** A case's test with its templates rendered, and its prompt rendered with the test's vars. */
interface RenderedCase {
  test: TestSpec;
  prompt: RenderedPrompt;
}

const renderCase = (c: PlannedCase): RenderedCase => {
  const written = c.written();
  const test = renderTest(written);
  // An assertion no template changed for this test is as the plan checked it when it loaded the test.
  written.assert.forEach((a, i) => {
    if (test.assert[i] === a) takeAsChecked(a.type, a.config);
  });
  return { test, prompt: renderPrompt(c.promptSpec, test.vars) };
};

/**
 * The task an eval case compiles into: the eval's workspace and the test's `before` steps, a prompt step, a
 * verify step grading its output, then the test's `after` steps.
 */
export const caseTask = (
  c: PlannedCase,
  timeoutS: number | undefined,
  root: string,
  rendered: RenderedCase = renderCase(c),
): TaskSpec => {
  const { test } = rendered;
  const { prompt, messages } = rendered.prompt;
  return {
    id: `case:${c.key}`,
    vars: test.vars,
    // The case's time limit covers every step, grading included, not only the prompt.
    ...(timeoutS ? { timeoutS } : {}),
    steps: [
      ...(c.eval.workspace ? [c.eval.workspace] : []),
      ...(test.before ?? []),
      {
        id: casePromptStep,
        type: 'prompt',
        config: builtConfig(steps.prompt, {
          target: targetRef(c.target, root),
          prompt,
          ...(messages ? { messages } : {}),
        }),
      },
      {
        id: caseVerifyStep,
        type: 'verify',
        config: builtConfig(steps.verify, {
          verifierId: caseVerifier,
          input: casePromptStep,
          aggregate: 'weighted_average',
          threshold: test.threshold,
          baseDir: displayPath(c.evalDir, root),
          test: test.id,
          assert: test.assert.map(assertionConfig),
          judges: judgeRefs(test.assert, c.eval.judges, root, c.target),
        }),
      },
      ...(test.after ?? []),
    ],
  };
};

/** The run metadata key of the bundle a case's group appends to, project-relative: `results pull` writes there. */
export const bundleMetadataKey = 'bundle';

export interface CaseSubmitOptions {
  groupId: string;
  /** Where the case's model calls are recorded and replayed (`--cassette`); none when off. */
  cassette: CassetteRef | undefined;
  /** The bundle the group appends to, relative to the project root (POSIX). */
  bundle: string;
  /** The project root: the task names files relative to it. */
  root: string;
  /** 1-based number of this execution among the bundle's rows for the key. */
  attempt: number;
  retries: number;
  timeoutS: number | undefined;
  limits: ConcurrencyLimit[];
  projectFiles: Record<string, string>;
}

export const caseRequest = (c: PlannedCase, o: CaseSubmitOptions): SubmitRequest => {
  // Rendered once for both the task and, when worked out on demand, the fingerprint.
  const rendered = renderCase(c);
  return {
    groupId: o.groupId,
    task: caseTask(c, o.timeoutS, o.root, rendered),
    context: {},
    retries: o.retries,
    target: c.target.label,
    metadata: { identity: { ...c.identity }, [bundleMetadataKey]: o.bundle },
    case: {
      identity: c.identity,
      key: c.key,
      fingerprint: c.fingerprintFrom(rendered.test, rendered.prompt),
      attempt: o.attempt,
      verifierId: caseVerifier,
      projectFiles: o.projectFiles,
      ...(o.cassette ? { cassette: o.cassette } : {}),
    },
    limits: o.limits,
  };
};
