import { isRecord, type JsonObject } from '../records.js';
import type { SlotRef } from '../workspaces/slot.js';

/**
 * What a run leaves running or on disk, recorded in its context under `resources.<step id>` so teardown can
 * run from the stored instance alone (another process, after `--keep`), not only from this process's memory.
 */
export type Resource =
  | {
      kind: 'workspace';
      path: string;
      /** A pooled slot: returned to its pool (reset) instead of removed; absent in records of older runs. */
      slot?: SlotRef;
      /** What to save of the workspace before it goes: the spec's named files. */
      capture?: { files: string[]; maxBytes: number };
    }
  | {
      kind: 'service';
      pid: number;
      /** The process's start time in clock ticks, so a pid the OS has since reused is never signalled. */
      startTicks: number | null;
      log: string;
      /** What was checked for readiness, for the CLI to print (`tcp 127.0.0.1:8080`). */
      ready: string | null;
    };

export const resourcesPath = 'resources';
export const workspacePath = 'workspace';

const isResource = (v: unknown): v is Resource =>
  isRecord(v) &&
  ((v.kind === 'workspace' && typeof v.path === 'string') ||
    (v.kind === 'service' && typeof v.pid === 'number' && typeof v.log === 'string'));

/** The resources a context records, by the step that made them. */
export const resourcesOf = (context: Readonly<JsonObject>): [string, Resource][] => {
  const all: unknown = context[resourcesPath];
  if (!isRecord(all)) return [];
  return Object.entries(all).filter((e): e is [string, Resource] => isResource(e[1]));
};

/** The workspace later steps run in: the last one a workspace step made. */
export const workspaceOf = (context: Readonly<JsonObject>): string | undefined => {
  const ws = context[workspacePath];
  return isRecord(ws) && typeof ws.path === 'string' ? ws.path : undefined;
};

/** The folder of one run under the work root: everything its steps make lives inside it. */
export const runDir = (workRoot: string, instanceId: string): string =>
  `${workRoot}/${instanceId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
