import type { z } from 'zod';
import { CanceledError, ProctorError } from '../errors.js';
import type { ConfigReferences, Usage } from '../records.js';
import type { Target } from '../targets/target.js';

/** Everything a grader may look at for one case: plain data. */
export interface GradeInput {
  output: string;
  prompt: string;
  vars: Record<string, unknown>;
  test: string;
  target: string;
  usage: Usage;
  durationMs: number;
  /** The case's workspace, when it has one; scripts run there. */
  cwd?: string;
}

/** One grader's verdict; a failed verdict is an outcome, never an error. */
export interface GradeResult {
  pass: boolean;
  /** 0..1 */
  score: number;
  reason: string;
  /** The judge calls behind a model-graded verdict: prompt, raw reply, usage (kept in the case's result). */
  judgeCalls?: JudgeCall[];
}

/** One call of a judge, as the grading artifact keeps it. */
export interface JudgeCall {
  judge: string;
  prompt: string;
  reply: string;
  toolInput?: unknown;
  usage: Usage;
  durationMs: number;
}

/** Grades one output. Throws ProctorError('grader_error') when it cannot grade (not when the output is bad). */
export type Grader = (input: GradeInput, signal: AbortSignal) => GradeResult | Promise<GradeResult>;

export interface GraderContext {
  /** Directory of the eval file: `file://` references resolve against it. */
  baseDir: string;
  /** The judge targets the plan resolved for this assertion, by label (model-graded kinds only). */
  judge?(label: string): Target;
}

/**
 * One kind of grader. `config` validates the assertion's own keys (everything but type, weight, required,
 * id, threshold); the YAML schema and the JSON Schema are derived from it.
 */
export interface GraderDef<C extends z.ZodType = z.ZodType> {
  /** Its config schema, built on the first call and kept (src/once.ts): a registry loads every kind, a command meets few. */
  config: () => C;
  create(config: z.output<C>, context: GraderContext): Grader;
  /** Files and commands the config names: a missing file is refused at load, and their content is fingerprinted. */
  references?(config: z.output<C>): ConfigReferences;
  /** A model-graded kind: the plan resolves its `judge` (or refuses the eval when none is configured). */
  judged?: true;
  /**
   * Config keys holding templates the grader fills itself when it grades (a judge prompt reads the case's output):
   * the plan leaves them as written instead of rendering them with the test's vars.
   */
  gradingTemplates?: readonly string[];
  /**
   * Creating one costs less than finding it among the shared graders (a string or a number compared, nothing
   * compiled): the engine creates it for each grading instead of keeping it. Its config must parse to itself (no
   * default, no transform): one the plan checked as written is then taken as it is (`takeAsChecked`).
   */
  cheap?: true;
}

/**
 * The error of a grader its signal stopped. A deadline (the signal's reason is a `timeout` ProctorError) caught
 * the grader still running: that is the grader's fault and a retry would not cure it, so grader_error; any
 * other abort is a cancellation.
 */
export const stoppedGrader = (signal: AbortSignal, source: string): Error => {
  const reason: unknown = signal.reason;
  if (reason instanceof ProctorError && reason.kind === 'timeout')
    return new ProctorError('grader_error', `${source} was still running when ${reason.message}`);
  return new CanceledError(`${source} canceled`);
};
