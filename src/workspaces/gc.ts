import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { RunOwner } from '../store/store.js';
import { type OwnerFile, pruneEmpty, readOwnerFile, readServiceFiles } from './owner-file.js';
import { poolsDir } from './pool.js';

export interface SweepOptions {
  /** Whether the process that wrote an owner file is gone (a live owner's directories are never touched). */
  ownerGone(owner: RunOwner): boolean;
  /** Stops a background service's process group. */
  stopService(pid: number, startTicks: number | null): Promise<void>;
}

/** A directory `runs gc` removed, and the services it stopped first. */
export interface Swept {
  dir: string;
  kind: 'slot' | 'run';
  runId: string | null;
  owner: RunOwner;
  stopped: number[];
}

const subdirs = async (dir: string): Promise<string[]> => {
  try {
    return (await readdir(dir, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => path.join(dir, e.name));
  } catch {
    return [];
  }
};

/**
 * Removes what dead processes left under the work root: pool slots (`pool/<spec>/<slot>`) and run folders
 * (service logs), stopping the services a run folder lists first. Reads only the owner files, so it works
 * after a SIGKILL that never reached the store.
 */
export const sweepWorkRoot = async (workRoot: string, o: SweepOptions): Promise<Swept[]> => {
  const slots = (await Promise.all((await subdirs(poolsDir(workRoot))).map(subdirs))).flat();
  const runs = (await subdirs(workRoot)).filter((d) => d !== poolsDir(workRoot));
  const swept: Swept[] = [];
  const visit = async (dir: string, kind: Swept['kind'], file: OwnerFile) => {
    const stopped: number[] = [];
    for (const s of await readServiceFiles(dir)) {
      await o.stopService(s.pid, s.start_ticks);
      stopped.push(s.pid);
    }
    await rm(dir, { recursive: true, force: true });
    await pruneEmpty(path.dirname(dir), workRoot);
    swept.push({ dir, kind, runId: file.run_id, owner: file.owner, stopped });
  };
  for (const [kind, dirs] of [
    ['slot', slots],
    ['run', runs],
  ] as const) {
    for (const dir of dirs) {
      const file = await readOwnerFile(dir);
      if (file && o.ownerGone(file.owner)) await visit(dir, kind, file);
    }
  }
  return swept;
};
