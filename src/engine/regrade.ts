import path from 'node:path';
import { type CaseResult, type IndexRow, toIndexRow } from '../bundle/row.js';
import { writeSummary } from '../bundle/summary.js';
import { artifactDir, BundleWriter } from '../bundle/writer.js';
import { CanceledError, type ErrorRecord, toErrorRecord } from '../errors.js';
import { extended } from '../extended.js';
import type { JsonObject, Outcome, Usage } from '../records.js';
import { zeroUsage } from '../records.js';
import { type GradingSpec, gradeOutput } from './grade.js';
import type { Services } from './services.js';

/** One stored output to grade again (see plan/regrade-plan.ts). */
export interface RegradeItem {
  row: IndexRow;
  output: { text: string; prompt: string; durationMs: number; target: string };
  vars: JsonObject;
  grading: JsonObject;
}

export interface RegradeRun {
  sourceDir: string;
  outputDir: string;
  runId: string;
  items: readonly RegradeItem[];
  concurrency: number;
}

/**
 * Writes one regraded case into the new bundle: its grading as result.json, then its row. A regrade calls no
 * target and commits no run, so its bundle is written here directly, not materialised from the store.
 */
const recordRegrade = (writer: BundleWriter, result: CaseResult, files: Record<string, string>) => {
  writer.writeCase(result.key, 1, files, JSON.stringify(toIndexRow(result)));
  writer.flush();
};

const regradeOne = async (
  services: Services,
  writer: BundleWriter,
  run: RegradeRun,
  item: RegradeItem,
  signal: AbortSignal,
) => {
  const startedAt = Date.now();
  const spec = item.grading as unknown as GradingSpec;
  const input = {
    output: item.output.text,
    prompt: item.output.prompt,
    vars: item.vars,
    test: item.row.identity.test,
    target: item.output.target,
    // The target was not called again: nothing spent on it now; graders see what the stored call cost.
    usage: {
      inputTokens: item.row.usage.input_tokens,
      outputTokens: item.row.usage.output_tokens,
      costUsd: item.row.usage.cost_usd,
    },
    durationMs: item.output.durationMs,
  };
  let outcome: Outcome;
  let score: number | null = null;
  let grading: unknown;
  let error: ErrorRecord | null = null;
  let judgeUsage: Usage | undefined;
  try {
    const graded = await gradeOutput(spec, input, services, signal);
    outcome = graded.verification.pass ? 'passed' : 'failed';
    score = graded.verification.score;
    judgeUsage = graded.verification.judgeUsage;
    grading = extended(graded.verification, { judgeCalls: graded.judgeCalls });
  } catch (e) {
    if (e instanceof CanceledError) throw e;
    outcome = 'error';
    error = toErrorRecord(e);
  }
  const finishedAt = Date.now();
  const regrade = {
    source_bundle: path.basename(run.sourceDir),
    source_run: item.row.run_id,
    source_artifacts: item.row.artifacts,
  };
  const result: CaseResult = {
    identity: item.row.identity,
    key: item.row.key,
    fingerprint: item.row.fingerprint,
    outcome,
    score,
    error,
    attempts: 1,
    durationMs: finishedAt - startedAt,
    usage: zeroUsage(),
    ...(judgeUsage ? { judgeUsage } : {}),
    runId: run.runId,
    groupId: run.runId,
    startedAt,
    finishedAt,
    artifacts: artifactDir(item.row.key, 1),
    regrade,
  };
  recordRegrade(writer, result, {
    // Compact, as a run's: one line, so the bundle packs it instead of making a folder for it.
    'result.json': JSON.stringify({
      identity: item.row.identity,
      outcome,
      score,
      error,
      output: item.output.text,
      regrade,
      grading,
    }),
  });
};

/** Grades every stored output again, `concurrency` at a time, into a new bundle; no target is called. */
export const regradeBundle = async (services: Services, run: RegradeRun, signal: AbortSignal) => {
  const writer = new BundleWriter(run.outputDir);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < run.items.length) {
      const item = run.items[next++] as RegradeItem;
      await regradeOne(services, writer, run, item, signal);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(run.concurrency, run.items.length)) }, worker));
  } finally {
    writer.close();
  }
  return writeSummary(run.outputDir, run.runId);
};
