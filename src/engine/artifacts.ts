import type { JsonObject } from '../records.js';
import type { JournalEntry } from '../store/store.js';
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
 * A run's artifacts as relative paths → contents, from its snapshot steps' outputs: `<step>/diff.patch` and
 * `<step>/files/<path>`. The latest snapshot of a step wins (a retried span snapshots again).
 */
export const snapshotArtifacts = (outputs: readonly { stepId: string; output: unknown }[]): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const { stepId, output } of outputs) {
    if (!isSnapshotOutput(output)) continue;
    if (output.diff !== null) out[`${stepId}/diff.patch`] = output.diff;
    for (const [name, text] of Object.entries(output.files)) {
      // A name that climbs out (`../x`) would write outside the export directory.
      if (!name.split('/').includes('..') && !name.startsWith('/')) out[`${stepId}/files/${name}`] = text;
    }
  }
  return out;
};

/** A stored run as an export holds it: its final context and every artifact, replayed from the journal. */
export const exportedRun = (start: JsonObject, journal: readonly JournalEntry[]) => ({
  context: replay(start, journal),
  artifacts: snapshotArtifacts(journal),
});
