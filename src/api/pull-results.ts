import { join, resolve } from 'node:path';
import { recordGroup } from '../bundle/groups.js';
import { lockBundle } from '../bundle/lock.js';
import { readSummary, type Summary, writeSummary } from '../bundle/summary.js';
import { InputError } from '../errors.js';
import { bundleMetadataKey } from '../plan/compile-task.js';
import { resultsDir } from '../plan/select-bundle.js';
import type { ProjectConfig } from '../plan/spec.js';
import { currentOwner, ownerProcessState } from '../runners/owner.js';
import { openStore } from '../store/open.js';
import { Materialiser } from './materialise.js';

export interface PullResultsOptions {
  config: ProjectConfig;
  cwd: string;
  /** The run (group) id. */
  runId: string;
  /** Bundle directory; default the bundle the run appended to, else `.proctor/results/<run>`. */
  output?: string;
}

export interface PullResult {
  dir: string;
  /** Rows this pull appended (0: the bundle already held every committed result). */
  appended: number;
  /** The run's cases not terminal yet: a pull while it runs writes what is committed so far. */
  unfinished: number;
  summary: Summary;
}

/**
 * Writes or completes the bundle of a run from the store, on any machine that reaches the store: a follower
 * that died, a run submitted elsewhere. Rows the bundle holds are not written again.
 */
export const pullResults = async (o: PullResultsOptions): Promise<PullResult> => {
  const store = await openStore(o.config.store);
  try {
    const runs = await store.listRuns({ groupId: o.runId, limit: 1 });
    const first = runs[0];
    if (!first) {
      throw new InputError(
        `no run "${o.runId}" in the store`,
        undefined,
        'give a run id that `proctor runs list` shows',
      );
    }
    const recorded = first.metadata[bundleMetadataKey];
    const dir = o.output
      ? resolve(o.cwd, o.output)
      : typeof recorded === 'string'
        ? resolve(o.config.root, recorded)
        : join(resultsDir(o.config), o.runId);
    const held = lockBundle(dir, currentOwner(), ownerProcessState);
    const materialiser = new Materialiser(store, o.runId, dir, false);
    try {
      recordGroup(dir, o.runId);
      const appended = await materialiser.complete();
      const total = (await store.groupProgress(o.runId)).reduce((n, p) => n + p.count, 0);
      const unfinished = total - (await store.countFinished(o.runId));
      return { dir, appended, unfinished, summary: writeSummary(dir, readSummary(dir)?.run_id ?? o.runId) };
    } finally {
      materialiser.close();
      held.release();
    }
  } finally {
    await store.close();
  }
};
