import { readdir, rm, rmdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { JsonObject } from '../records.js';
import type { ContextOp, Store } from '../store/store.js';
import { ownerFileName, serviceFileSuffix } from '../workspaces/owner-file.js';
import { removeSlot } from '../workspaces/pool.js';
import type { SlotRef } from '../workspaces/slot.js';
import { replay } from './context.js';
import { stopGroup } from './process-tree.js';
import { type Resource, resourcesOf, resourcesPath, workspaceOf, workspacePath } from './resources.js';

const serviceGraceMs = 3000;

/** Removes a run folder once nothing but its owner file is left in it. */
const removeIfEmpty = async (dir: string): Promise<void> => {
  try {
    const left = await readdir(dir);
    if (left.length === 1 && left[0] === ownerFileName) await rm(`${dir}/${ownerFileName}`);
    if (left.length <= 1) await rmdir(dir);
  } catch {
    // Gone already, or another run's files still live there.
  }
};

/** Where a pooled slot goes back: this process's pools. Absent (another process, after `--keep`): removed. */
export interface SlotReturn {
  release(slot: SlotRef): Promise<void>;
}

/**
 * Stops every service and removes every workspace of `resources` (a pooled slot goes back to its pool), the
 * last made first and one at a time: a resource may use one made before it (a service started in a workspace
 * holds its files open; a service may be the client of an earlier one). `resources` is in the order the steps
 * made them, as the context records them. Returns the ops that drop them from the context. Never throws:
 * teardown runs on every path, including after a failure, and one stubborn resource must not keep the others up.
 */
export const tearDown = async (
  resources: readonly [string, Resource][],
  context: Readonly<JsonObject>,
  pools?: SlotReturn,
): Promise<ContextOp[]> => {
  const parents = new Set<string>();
  for (const [, r] of [...resources].reverse()) {
    if (r.kind === 'service') await stopGroup(r.pid, r.startTicks, serviceGraceMs).catch(() => {});
    if (r.kind === 'workspace' && r.slot) {
      await (pools ? pools.release(r.slot) : removeSlot(r.slot.dir)).catch(() => {});
      continue;
    }
    const path = r.kind === 'workspace' ? r.path : r.log;
    await rm(path, { recursive: true, force: true }).catch(() => {});
    if (r.kind === 'service') await rm(serviceFile(r.log), { force: true }).catch(() => {});
    parents.add(dirname(path));
  }
  // A run's folder under .proctor/work holds only what its steps made: once those are gone, so is it.
  for (const dir of parents) await removeIfEmpty(dir);
  const ops: ContextOp[] = resources.map(([id]) => ({ op: 'unset', path: `${resourcesPath}.${id}` }));
  const current = workspaceOf(context);
  if (current && resources.some(([, r]) => r.kind === 'workspace' && r.path === current))
    ops.push({ op: 'unset', path: workspacePath });
  return ops;
};

/** Tears down everything a stored instance still holds (after `--keep`), journaling the change. */
export const tearDownInstance = async (store: Store, instanceId: string): Promise<Resource[]> => {
  const instance = await store.getInstance(instanceId);
  if (!instance) return [];
  const journal = await store.readJournal(instanceId);
  const context = replay(instance.context, journal);
  const resources = resourcesOf(context);
  if (resources.length === 0) return [];
  const ops = await tearDown(resources, context);
  const seq = (journal.at(-1)?.seq ?? 0) + 1;
  // A refused append means another process journaled meanwhile; the resources are gone either way.
  await store.appendJournal({
    instanceId,
    seq,
    stepId: teardownEntryId,
    attempt: 1,
    ops,
    output: { teardown: true },
    createdAt: Date.now(),
  });
  return resources.map(([, r]) => r);
};

/** Where a service's pid is kept for `runs gc`, beside its log. */
export const serviceFile = (log: string): string => log.replace(/\.log$/, serviceFileSuffix);

/** The step id of the journal entry an automatic teardown appends; no user step may have it. */
export const teardownEntryId = '@teardown';
