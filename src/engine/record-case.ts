import type { CaseResult } from '../bundle/row.js';
import { artifactDir } from '../bundle/writer.js';
import type { ErrorRecord } from '../errors.js';
import { addUsage, type Outcome, type Usage, zeroUsage } from '../records.js';
import type { RunFinish } from '../store/store.js';
import { isSnapshotOutput, type SnapshotOutput } from './artifacts.js';
import type { TaskRunResult } from './run-task.js';
import type { Services } from './services.js';
import type { CaseSpec, RunRequest } from './task.js';

interface Verification {
  score: number;
  pass: boolean;
  judgeUsage?: Usage;
}

interface OutputSummary {
  text: string;
  usage?: Usage;
}

/** A task run's outcome: passed when it completed and every verifier passed. */
export const taskOutcome = (result: TaskRunResult): Outcome => {
  if (result.status === 'CANCELED') return 'canceled';
  if (result.status === 'FAILED') return 'error';
  const verifications = Object.values((result.context.verifications ?? {}) as unknown as Record<string, Verification>);
  return verifications.every((v) => v.pass) ? 'passed' : 'failed';
};

const caseOutcome = (c: CaseSpec, result: TaskRunResult): { outcome: Outcome; score: number | null } => {
  if (result.status === 'CANCELED') return { outcome: 'canceled', score: null };
  if (result.status === 'FAILED') return { outcome: 'error', score: null };
  const verification = (result.context.verifications as unknown as Record<string, Verification> | undefined)?.[
    c.verifierId
  ];
  if (!verification) return { outcome: 'error', score: null };
  return { outcome: verification.pass ? 'passed' : 'failed', score: verification.score };
};

/**
 * Records an eval case in its bundle: artifacts first, then the index row. After this returns the result
 * survives any crash, so the run may be marked terminal. `result` comes from runTask with the run's secrets
 * already redacted (steps, error, workspace captures), so it is written as it is.
 */
export const recordCase = async (
  req: RunRequest & { case: CaseSpec },
  result: TaskRunResult,
  services: Services,
  startedAt: number,
): Promise<RunFinish> => {
  const c = req.case;
  const { outcome, score } = caseOutcome(c, result);
  const outputs = Object.values((result.context.outputs ?? {}) as unknown as Record<string, OutputSummary>);
  const usage = outputs.reduce((sum, o) => (o.usage ? addUsage(sum, o.usage) : sum), zeroUsage());
  const verifications = Object.values((result.context.verifications ?? {}) as unknown as Record<string, Verification>);
  // A verify step that failed on a judge's unreadable reply still kept what its calls spent.
  const failedGrading = result.steps
    .filter((s) => s.status === 'failed')
    .map((s) => s.output as unknown as Verification | null)
    .filter((o): o is Verification => o !== null && typeof o === 'object');
  const judged = [...verifications, ...failedGrading].filter((v) => v.judgeUsage);
  const judgeUsage = judged.length
    ? judged.reduce((sum, v) => addUsage(sum, v.judgeUsage as Usage), zeroUsage())
    : undefined;
  const finishedAt = Date.now();
  const error: ErrorRecord | null =
    result.error ??
    (outcome === 'error' ? { kind: 'internal', message: 'no verification result', retryable: false } : null);
  const artifacts = artifactDir(c.key, c.attempt);
  const bundle = services.bundle(c.bundleDir);
  const output = outputs.map((o) => o.text).join('\n');
  // The bundle keeps one flat folder per case: a snapshot's tree goes in as one JSON file beside its diff.
  const snapshots = result.steps.filter((s) => isSnapshotOutput(s.output));
  const snapshotFiles = Object.fromEntries(
    snapshots.flatMap((s) => {
      const o = s.output as unknown as SnapshotOutput;
      return [
        ...(o.diff !== null ? [[`${s.stepId}.diff`, o.diff]] : []),
        [`${s.stepId}.files.json`, JSON.stringify(o.files, null, 2)],
      ];
    }),
  );
  // Each workspace's diff against its baseline, taken before its slot was reset for the next case.
  const workspaceFiles = Object.fromEntries(
    Object.entries(result.captures).flatMap(([stepId, w]) => [
      ...(w.diff !== null ? [[`${stepId}.diff`, w.diff]] : []),
      ...(Object.keys(w.files).length || w.skipped.length || w.error
        ? [[`${stepId}.files.json`, JSON.stringify({ files: w.files, skipped: w.skipped, error: w.error }, null, 2)]]
        : []),
    ]),
  );
  bundle.writeArtifacts(c.key, c.attempt, {
    ...workspaceFiles,
    ...snapshotFiles,
    'result.json': JSON.stringify(
      { identity: c.identity, outcome, score, error, output, steps: result.steps },
      null,
      2,
    ),
  });
  const row: CaseResult = {
    identity: c.identity,
    key: c.key,
    fingerprint: c.fingerprint,
    outcome,
    score,
    error,
    attempts: Math.max(1, ...result.steps.map((s) => s.attempts)),
    durationMs: finishedAt - startedAt,
    usage,
    ...(judgeUsage ? { judgeUsage } : {}),
    runId: req.runId,
    groupId: req.groupId,
    startedAt,
    finishedAt,
    artifacts,
  };
  bundle.appendRow(row);
  return { status: result.status, outcome, ...(score === null ? {} : { score }), ...(error ? { error } : {}) };
};
