import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InputError } from '../errors.js';
import { writeFileAtomic } from './atomic.js';

/** The folder of a bundle where the command writing it records itself: one file per would-be writer. */
export const lockDir = '.writer';

/** A process that writes bundles, as runs record their owner. */
export interface LockOwner {
  host: string;
  pid: number;
  /** ms since epoch: with the pid, tells the owner from a later process that reused its pid. */
  startedAt: number;
}

/** Whether a recorded owner on this host still runs (runners/owner.ts answers it from /proc). */
export type OwnerState = (owner: LockOwner) => 'alive' | 'exited' | 'reused';

/** Held while a command writes a bundle; released on exit, a signal's exit included. */
export interface BundleLock {
  release(): void;
}

const readOwner = (file: string): LockOwner | undefined => {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as { host?: unknown; pid?: unknown; started_at?: unknown };
    return typeof value.host === 'string' && typeof value.pid === 'number' && typeof value.started_at === 'number'
      ? { host: value.host, pid: value.pid, startedAt: value.started_at }
      : undefined;
  } catch {
    return undefined;
  }
};

const busy = (dir: string, file: string, other: LockOwner | undefined, here: string): InputError =>
  new InputError(
    other
      ? `bundle ${dir} is being written by another command (pid ${other.pid} on ${other.host}, started ${new Date(other.startedAt).toISOString()})`
      : `bundle ${dir} is locked by ${file}, which names no owner`,
    undefined,
    other && other.host === here
      ? 'wait for that command to finish (or stop it), then run this one again'
      : `wait for that command to finish; if it is gone for good, remove ${file}`,
  );

/** `dir` and those of its parents that do not exist yet, deepest first. */
const missingFolders = (dir: string): string[] => {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.push(d);
  return missing;
};

/**
 * Makes this process the one writer of bundle `dir`, or refuses with an InputError naming the writer. Each
 * would-be writer first records itself in its own file, then looks for others: of two that start together at
 * least one sees the other and backs off, so two never both hold it (both may back off, which is safe). A
 * record whose process is gone (exited, or its pid reused) is removed; one of another host is honoured, as
 * its process cannot be checked from here.
 */
export const lockBundle = (dir: string, owner: LockOwner, ownerState: OwnerState): BundleLock => {
  const created = missingFolders(dir);
  const locks = join(dir, lockDir);
  mkdirSync(locks, { recursive: true });
  const mine = join(locks, `${owner.host}-${owner.pid}.json`);
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    process.off('exit', release);
    rmSync(mine, { force: true });
    // Empty folders are left by a command refused, failed or given nothing to run: the folders the lock made
    // (a new -o folder, `.proctor/results` of a new project) go too, so bad input leaves nothing written.
    for (const d of [locks, ...created]) {
      try {
        rmdirSync(d);
      } catch {
        return;
      }
    }
  };
  // A second Ctrl-C exits at once, skipping the command's own cleanup; 'exit' still runs.
  process.on('exit', release);
  writeFileAtomic(mine, `${JSON.stringify({ host: owner.host, pid: owner.pid, started_at: owner.startedAt })}\n`);
  for (const name of readdirSync(locks)) {
    const file = join(locks, name);
    if (!name.endsWith('.json') || file === mine) continue;
    const other = readOwner(file);
    if (other && other.host === owner.host && ownerState(other) !== 'alive') {
      rmSync(file, { force: true });
      continue;
    }
    release();
    throw busy(dir, file, other, owner.host);
  }
  return { release };
};
