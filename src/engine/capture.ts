import { captureSlot, type WorkspaceCapture } from '../workspaces/capture.js';
import type { Resource } from './resources.js';

/** The step id of the journal entry holding what each workspace held at the end of a run; no user step has it. */
export const captureEntryId = '@workspace';

/** What that entry's output is. */
export interface CaptureOutput {
  workspaces: Record<string, WorkspaceCapture>;
}

export const isCaptureOutput = (v: unknown): v is CaptureOutput =>
  typeof v === 'object' && v !== null && 'workspaces' in v && typeof v.workspaces === 'object' && v.workspaces !== null;

/** The diff and named files of every pooled workspace a run holds, by the step that made it. */
export const captureWorkspaces = async (
  held: readonly [string, Resource][],
): Promise<Record<string, WorkspaceCapture>> => {
  const out: Record<string, WorkspaceCapture> = {};
  for (const [id, r] of held) {
    if (r.kind !== 'workspace' || !r.slot) continue;
    out[id] = await captureSlot(r.slot, r.capture?.files ?? [], r.capture?.maxBytes ?? 1_000_000);
  }
  return out;
};
