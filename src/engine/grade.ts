import { ProctorError } from '../errors.js';
import { scoreCase } from '../graders/assertion.js';
import type { GradeInput, GradeResult, JudgeCall } from '../graders/grader.js';
import type { GraderKind } from '../graders/registry.js';
import { addUsage, type Json, type Usage, zeroUsage } from '../records.js';
import type { Services } from './services.js';
import type { TargetRef } from './target-ref.js';

/** An assertion as a verify step carries it. */
export interface AssertionConfig {
  kind: GraderKind;
  negate: boolean;
  weight: number;
  required: boolean;
  id?: string | undefined;
  threshold?: number | undefined;
  config: Record<string, unknown>;
}

export interface GradingSpec {
  assert: readonly AssertionConfig[];
  judges: Readonly<Record<string, TargetRef>>;
  baseDir: string;
  threshold: number;
  aggregate: 'weighted_average' | 'all_pass' | 'any_pass';
}

/** What grading an output decided, and the judge calls behind it (kept apart: they go to the case's result). */
export interface Grading {
  verification: {
    score: number;
    pass: boolean;
    threshold: number;
    aggregate: GradingSpec['aggregate'];
    results: { id: string; weight: number; required: boolean; pass: boolean; score: number; reason: string }[];
    judgeUsage?: Usage;
  };
  judgeCalls: Record<string, Json>;
}

/** Runs every assertion over one output and weighs them; used by the verify step and by regrade. */
export const gradeOutput = async (
  spec: GradingSpec,
  input: GradeInput,
  services: Services,
  signal: AbortSignal,
): Promise<Grading> => {
  const results = [];
  const judgeCalls: Record<string, Json> = {};
  let judgeUsage: Usage | undefined;
  const keep = (id: string, calls: readonly JudgeCall[]): void => {
    judgeCalls[id] = calls as unknown as Json;
    for (const call of calls) judgeUsage = addUsage(judgeUsage ?? zeroUsage(), call.usage);
  };
  for (const a of spec.assert) {
    const assertion = services.assertion({ spec: a, baseDir: spec.baseDir, judges: spec.judges });
    let graded: GradeResult;
    try {
      graded = await assertion.grade(input, signal);
    } catch (error) {
      // A judge that could not grade was still paid: its calls and those before it leave with the error.
      const failed = error instanceof ProctorError ? (error.detail.output as { judgeCalls?: JudgeCall[] }) : undefined;
      if (!failed?.judgeCalls) throw error;
      keep(assertion.id, failed.judgeCalls);
      throw new ProctorError((error as ProctorError).kind, (error as ProctorError).message, {
        cause: error,
        output: { judgeCalls, ...(judgeUsage ? { judgeUsage } : {}) },
      });
    }
    const { judgeCalls: calls, ...r } = graded;
    results.push({ id: assertion.id, weight: assertion.weight, required: assertion.required, ...r });
    if (calls) keep(assertion.id, calls);
  }
  const { score, pass: weightedPass } = scoreCase(results, spec.threshold);
  const pass =
    spec.aggregate === 'all_pass'
      ? results.every((r) => r.pass)
      : spec.aggregate === 'any_pass'
        ? results.some((r) => r.pass)
        : weightedPass;
  return {
    verification: {
      score,
      pass,
      threshold: spec.threshold,
      aggregate: spec.aggregate,
      results,
      ...(judgeUsage ? { judgeUsage } : {}),
    },
    judgeCalls,
  };
};
