import { type CaseResult, toIndexRow } from '../bundle/row.js';
import { artifactDir } from '../bundle/writer.js';
import type { ErrorRecord } from '../errors.js';
import { addUsage, type JsonObject, type Outcome, type Usage, zeroUsage } from '../records.js';
import type { RunFinish } from '../store/store.js';
import { isSnapshotOutput, type SnapshotOutput } from './artifacts.js';
import type { TaskRunResult } from './run-task.js';
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

/** Most bytes one artifact file keeps in the store (and so in the bundle): a longer one is cut, and says so. */
export const artifactCapBytes = 8 * 1024 * 1024;

/** A file within the cap as it is; a longer one cut at the cap (on a character boundary) with a marker line. */
const capped = (text: string): { text: string; truncated: boolean } => {
  // Only a file that might be over the cap is measured in bytes: UTF-8 is at most 3 bytes per UTF-16 unit.
  if (text.length * 3 <= artifactCapBytes) return { text, truncated: false };
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= artifactCapBytes) return { text, truncated: false };
  // Decoding a cut multi-byte character yields U+FFFD, dropped so the kept text is what the file said.
  const kept = bytes
    .subarray(0, artifactCapBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return {
    text: `${kept}\n[proctor: truncated: ${bytes.length} bytes, the first ${artifactCapBytes} kept]\n`,
    truncated: true,
  };
};

/**
 * An eval case's result as the store commits it with the run's terminal status: its index row and artifact
 * files, each file capped. The engine writes no bundle: the command following the run materialises it from
 * these. `result` comes from runTask with the run's secrets already redacted (steps, error, workspace
 * captures), so it is recorded as it is.
 */
export const recordCase = (
  req: RunRequest & { case: CaseSpec },
  result: TaskRunResult,
  startedAt: number,
): RunFinish => {
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
  const output = outputs.map((o) => o.text).join('\n');
  // The bundle keeps one flat folder per case: a snapshot's tree goes in as one JSON file beside its diff.
  const snapshots = result.steps.filter((s) => isSnapshotOutput(s.output));
  const snapshotFiles: Record<string, string> = Object.fromEntries(
    snapshots.flatMap((s) => {
      const o = s.output as unknown as SnapshotOutput;
      return [
        ...(o.diff !== null ? [[`${s.stepId}.diff`, o.diff]] : []),
        [`${s.stepId}.files.json`, JSON.stringify(o.files, null, 2)],
      ];
    }),
  );
  // Each workspace's diff against its baseline, taken before its slot was reset for the next case.
  const workspaceFiles: Record<string, string> = Object.fromEntries(
    Object.entries(result.captures).flatMap(([stepId, w]) => [
      ...(w.diff !== null ? [[`${stepId}.diff`, w.diff]] : []),
      ...(Object.keys(w.files).length || w.skipped.length || w.error
        ? [[`${stepId}.files.json`, JSON.stringify({ files: w.files, skipped: w.skipped, error: w.error }, null, 2)]]
        : []),
    ]),
  );
  const files: Record<string, string> = {};
  const truncated: string[] = [];
  for (const [name, text] of Object.entries({
    ...workspaceFiles,
    ...snapshotFiles,
    // Compact: written once per case into the store and the bundle, read by programs (jq pretty-prints it).
    'result.json': JSON.stringify({ identity: c.identity, outcome, score, error, output, steps: result.steps }),
  })) {
    const file = capped(text);
    files[name] = file.text;
    if (file.truncated) truncated.push(name);
  }
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
    ...(truncated.length ? { truncated } : {}),
    artifacts,
  };
  return {
    status: result.status,
    outcome,
    startedAt,
    ...(score === null ? {} : { score }),
    ...(error ? { error } : {}),
    result: {
      caseKey: c.key,
      attempt: c.attempt,
      target: c.identity.target,
      evalPath: c.identity.eval,
      row: toIndexRow(row) as unknown as JsonObject,
      files,
    },
  };
};
