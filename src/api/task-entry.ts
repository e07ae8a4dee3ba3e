import { isSnapshotOutput } from '../engine/artifacts.js';
import { captureEntryId } from '../engine/capture.js';
import type { RollbackOutput } from '../engine/run-task.js';
import { teardownEntryId } from '../engine/teardown.js';
import { isRecord } from '../records.js';
import type { JournalEntry } from '../store/store.js';

/** A verify step's output, as its journal entry holds it. */
export interface Verification {
  score: number;
  pass: boolean;
  results?: { id: string; pass: boolean; score: number; reason: string }[];
}

/**
 * What a journal entry of a followed task run is, in the terms a display needs: the engine's own entries
 * (seeded steps, rollbacks, teardown, the workspace capture) told apart from a step's, and a step's output
 * sorted by its shape (a verification, a snapshot, anything else with its step type).
 */
export type EntryView =
  | { kind: 'seeded'; stepId: string }
  | { kind: 'rollback'; rollback: RollbackOutput['rollback'] }
  | { kind: 'teardown' }
  | { kind: 'capture' }
  | { kind: 'verification'; stepId: string; attempt: number; verification: Verification }
  | { kind: 'snapshot'; stepId: string; attempt: number; files: string[]; diff: string | null }
  | { kind: 'step'; stepId: string; attempt: number; stepType: string | undefined; output: unknown };

const isRollback = (v: unknown): v is RollbackOutput => isRecord(v) && isRecord(v.rollback);
const isVerification = (v: unknown): v is Verification =>
  isRecord(v) && typeof v.score === 'number' && typeof v.pass === 'boolean';

/** `stepType`: the type of the step the entry belongs to, from the run's spec. */
export const entryView = (e: JournalEntry, stepType: string | undefined): EntryView => {
  const out = e.output;
  if (isRecord(out) && out.seeded === true) return { kind: 'seeded', stepId: e.stepId };
  if (isRollback(out)) return { kind: 'rollback', rollback: out.rollback };
  if (e.stepId === teardownEntryId) return { kind: 'teardown' };
  if (e.stepId === captureEntryId) return { kind: 'capture' };
  const step = { stepId: e.stepId, attempt: e.attempt };
  if (isVerification(out)) return { kind: 'verification', ...step, verification: out };
  if (isSnapshotOutput(out)) return { kind: 'snapshot', ...step, files: Object.keys(out.files), diff: out.diff };
  return { kind: 'step', ...step, stepType, output: out };
};
