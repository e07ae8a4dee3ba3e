import type { TaskSpec } from '../engine/task.js';
import type { JsonObject } from '../records.js';
import type { ConcurrencyLimit, SubmitRequest } from '../runners/runner.js';
import type { PlannedCase } from './matrix.js';
import type { AssertionSpec } from './spec.js';
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
        target: { label: c.target.label, kind: c.target.kind, config: c.target.config, baseDir: c.target.baseDir },
        prompt: c.prompt,
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
  projectFiles: Record<string, string>;
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
    projectFiles: o.projectFiles,
  },
  limits: o.limits,
});
