import { readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RunOwner } from '../store/store.js';

/**
 * Who a directory under `.proctor/work` belongs to: the process that made it and the run it serves now.
 * `proctor runs gc` reads these to remove what a dead process left, without asking the store.
 */
export interface OwnerFile {
  owner: RunOwner;
  run_id: string | null;
  instance_id: string | null;
}

/** A background service of a run, beside its log (`<step>.service.json`), so gc can stop it too. */
export interface ServiceFile {
  pid: number;
  start_ticks: number | null;
}

export const serviceFileSuffix = '.service.json';

export const ownerFileName = 'owner.json';

export const writeOwnerFile = (dir: string, file: OwnerFile): Promise<void> =>
  writeFile(path.join(dir, ownerFileName), `${JSON.stringify(file)}\n`);

export const readOwnerFile = async (dir: string): Promise<OwnerFile | undefined> => {
  try {
    const value = JSON.parse(await readFile(path.join(dir, ownerFileName), 'utf8')) as OwnerFile;
    return typeof value.owner?.pid === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
};

/** The services a run folder lists. */
export const readServiceFiles = async (dir: string): Promise<ServiceFile[]> => {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(serviceFileSuffix));
  const out: ServiceFile[] = [];
  for (const n of names) {
    try {
      const v = JSON.parse(await readFile(path.join(dir, n), 'utf8')) as ServiceFile;
      if (typeof v.pid === 'number') out.push(v);
    } catch {
      // Half-written by a process killed mid-write: its service had not started yet.
    }
  }
  return out;
};

/** Removes `dir` and then each parent up to `stop` (exclusive) that is left empty. */
export const pruneEmpty = async (dir: string, stop: string): Promise<void> => {
  for (let d = dir; d.startsWith(`${stop}${path.sep}`); d = path.dirname(d)) {
    try {
      await rmdir(d);
    } catch {
      return;
    }
  }
};
