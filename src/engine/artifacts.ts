import type { JsonObject } from '../records.js';
import type { JournalEntry } from '../store/store.js';
import { captureEntryId, isCaptureOutput } from './capture.js';
import { replay } from './context.js';

/** What a snapshot step journals as its output. */
export interface SnapshotOutput {
  files: Record<string, string>;
  skipped: string[];
  diff: string | null;
}

export const isSnapshotOutput = (v: unknown): v is SnapshotOutput =>
  typeof v === 'object' &&
  v !== null &&
  'files' in v &&
  'diff' in v &&
  typeof v.files === 'object' &&
  (typeof v.diff === 'string' || v.diff === null);

/**
 * A run's artifacts as relative paths → contents, from its snapshot steps' outputs and the workspaces captured
 * at its end: `<step>/diff.patch` and `<step>/files/<path>`. The latest snapshot of a step wins (a retried span snapshots again).
 */
const snapshotArtifacts = (outputs: readonly { stepId: string; output: unknown }[]): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const { stepId, output } of outputs) {
    if (stepId === captureEntryId && isCaptureOutput(output)) {
      for (const [ws, capture] of Object.entries(output.workspaces)) add(out, ws, capture);
      continue;
    }
    if (isSnapshotOutput(output)) add(out, stepId, output);
  }
  return out;
};

const add = (out: Record<string, string>, stepId: string, o: Pick<SnapshotOutput, 'files' | 'diff'>): void => {
  if (o.diff !== null) out[`${stepId}/diff.patch`] = o.diff;
  for (const [name, text] of Object.entries(o.files)) {
    // A name that climbs out (`../x`) would write outside the export directory.
    if (!name.split('/').includes('..') && !name.startsWith('/')) out[`${stepId}/files/${name}`] = text;
  }
};

/** A stored run as an export holds it: its final context and every artifact, replayed from the journal. */
export const exportedRun = (start: JsonObject, journal: readonly JournalEntry[]) => ({
  context: replay(start, journal),
  artifacts: snapshotArtifacts(journal),
});
