import type { StepSpec } from '../engine/task.js';
import type { JsonObject } from '../records.js';
import { workspaceSpecSchema } from '../workspaces/spec.js';
import type { Path, Source } from './source.js';
import { compileSteps, type StepScope } from './task-steps.js';

/** The steps an eval case compiles into, besides its own prompt and verify steps. */
export interface AroundSteps {
  /** Run before the prompt (a `workspace`, `exec` setup, …). */
  before: StepSpec[];
  /** Run after grading (a `snapshot`, …). */
  after: StepSpec[];
}

export const noSteps: AroundSteps = { before: [], after: [] };

/** The ids of the two steps every case has; a test's own steps may depend on them but not reuse them. */
export const casePromptStep = 'prompt';
export const caseVerifyStep = 'verify';
const caseWorkspaceStep = 'workspace';

const standIn = (id: string): StepSpec => ({ id, type: id, config: {} });

/**
 * An eval's `workspace:` as the step every case starts with; validated here so a bad spec fails at load.
 * `baseDir`: the eval's folder, relative to the project root.
 */
export const workspaceStep = (source: Source, at: Path, raw: unknown, baseDir: string): StepSpec => {
  const parsed = workspaceSpecSchema().safeParse(raw);
  if (!parsed.success) throw source.zodError(parsed.error, at, workspaceSpecSchema());
  return { id: caseWorkspaceStep, type: 'workspace', baseDir, config: raw as JsonObject };
};

/**
 * Compiles a test's (or default_test's) `before` and `after` steps after those it inherits: ids unique over the
 * whole case, `depends_on` naming only steps that run earlier (`after` steps may name `prompt` and `verify`).
 * `lead` are steps before everything (the eval's workspace).
 */
export const compileAround = (
  scope: StepScope,
  source: Source,
  at: Path,
  raw: { before?: readonly unknown[] | undefined; after?: readonly unknown[] | undefined },
  inherited: AroundSteps,
  lead: readonly StepSpec[],
): AroundSteps => {
  if (!raw.before?.length && !raw.after?.length) return inherited;
  const ownBefore = compileSteps(source, [...at, 'before'], raw.before ?? [], scope, [...lead, ...inherited.before]);
  const later = [casePromptStep, caseVerifyStep, ...inherited.after.map((s) => s.id)];
  ownBefore.forEach((s, i) => {
    if (later.includes(s.id))
      throw source.fail(
        [...at, 'before', i, 'id'],
        `duplicate step id "${s.id}"`,
        '`prompt`, `verify` and the ids of default_test’s `after` steps are taken',
      );
  });
  const before = [...inherited.before, ...ownBefore];
  const upToGrading = [...lead, ...before, standIn(casePromptStep), standIn(caseVerifyStep), ...inherited.after];
  const ownAfter = compileSteps(source, [...at, 'after'], raw.after ?? [], scope, upToGrading);
  return { before, after: [...inherited.after, ...ownAfter] };
};
