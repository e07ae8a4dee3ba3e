import type { TaskSpec } from '../engine/task.js';
import type { JsonObject } from '../records.js';
import type { ConcurrencyLimit, SubmitRequest } from '../runners/runner.js';
import { selfJudge } from './judges.js';
import type { PlannedCase } from './matrix.js';
import type { AssertionSpec, TargetSpec } from './spec.js';
import { casePromptStep, caseVerifyStep } from './test-steps.js';

const caseVerifier = 'main';

/** An assertion as a verify step's config carries it. */
export const assertionConfig = (a: AssertionSpec): JsonObject => ({
  kind: a.type,
  negate: a.negate,
  weight: a.weight,
  required: a.required,
  ...(a.id !== undefined ? { id: a.id } : {}),
  ...(a.threshold !== undefined ? { threshold: a.threshold } : {}),
  config: a.config,
});

/** A target as a step config carries it: raw config, and the price of its model when known. */
export const targetRef = (t: TargetSpec): JsonObject => ({
  label: t.label,
  kind: t.kind,
  config: t.config,
  baseDir: t.baseDir,
  ...(t.price ? { price: { ...t.price } } : {}),
});

/** The judge targets a verify step's assertions name, by label (`self`: the case's own target). */
export const judgeRefs = (
  asserts: readonly AssertionSpec[],
  judges: Readonly<Record<string, TargetSpec>>,
  self?: TargetSpec,
): JsonObject => {
  const out: JsonObject = {};
  for (const a of asserts) {
    const label = a.config.judge;
    if (typeof label !== 'string') continue;
    const target = label === selfJudge ? self : judges[label];
    if (target) out[label] = targetRef(target);
  }
  return out;
};

/**
 * The task an eval case compiles into: the eval's workspace and the test's `before` steps, a prompt step, a
 * verify step grading its output, then the test's `after` steps.
 */
export const caseTask = (c: PlannedCase, timeoutS: number | undefined): TaskSpec => ({
  id: `case:${c.key}`,
  vars: c.vars,
  // The case's time limit covers every step, grading included, not only the prompt.
  ...(timeoutS ? { timeoutS } : {}),
  ...(c.eval.workRoot ? { workRoot: c.eval.workRoot } : {}),
  steps: [
    ...(c.eval.workspace ? [c.eval.workspace] : []),
    ...(c.test.before ?? []),
    {
      id: casePromptStep,
      type: 'prompt',
      config: {
        target: targetRef(c.target),
        prompt: c.prompt,
        ...(c.messages ? { messages: c.messages as unknown as JsonObject[] } : {}),
      },
    },
    {
      id: caseVerifyStep,
      type: 'verify',
      config: {
        verifierId: caseVerifier,
        input: casePromptStep,
        threshold: c.threshold,
        baseDir: c.evalDir,
        test: c.test.id,
        assert: c.assert.map(assertionConfig),
        judges: judgeRefs(c.assert, c.eval.judges, c.target),
      },
    },
    ...(c.test.after ?? []),
  ],
});

export interface CaseSubmitOptions {
  groupId: string;
  bundleDir: string;
  /** 1-based number of this execution among the bundle's rows for the key. */
  attempt: number;
  retries: number;
  timeoutS: number | undefined;
  limits: ConcurrencyLimit[];
}

export const caseRequest = (c: PlannedCase, o: CaseSubmitOptions): SubmitRequest => ({
  groupId: o.groupId,
  task: caseTask(c, o.timeoutS),
  context: {},
  retries: o.retries,
  target: c.target.label,
  metadata: { identity: { ...c.identity } },
  case: {
    identity: c.identity,
    key: c.key,
    fingerprint: c.fingerprint,
    bundleDir: o.bundleDir,
    attempt: o.attempt,
    verifierId: caseVerifier,
  },
  limits: o.limits,
});
