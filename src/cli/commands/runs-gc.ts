import { hostname } from 'node:os';
import path from 'node:path';
import { stopGroup } from '../../engine/process-tree.js';
import { workRootDir } from '../../engine/task.js';
import { ownerProcessState } from '../../runners/owner.js';
import { reconcileOrphans } from '../../runners/reconcile.js';
import { configuredLeaseMs } from '../../runners/registry.js';
import type { PruneReport, Store } from '../../store/store.js';
import { sweepWorkRoot } from '../../workspaces/gc.js';
import { exitCodes } from '../exit-codes.js';
import { table } from '../summary-table.js';
import { withRunsStore } from './runs-store.js';

const serviceGraceMs = 3000;

interface Pruned {
  report: PruneReport;
  bytesBefore: number;
  bytesAfter: number;
}

/** Deletes the step state of runs finished more than `olderThanMs` ago, and measures the store around it. */
const prune = async (store: Store, olderThanMs: number): Promise<Pruned> => {
  const bytesBefore = await store.sizeBytes();
  const report = await store.pruneFinished(Date.now() - olderThanMs);
  await store.compact();
  return { report, bytesBefore, bytesAfter: await store.sizeBytes() };
};

const megabytes = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * `proctor runs gc`: reconciles orphaned runs now, then removes the workspaces and stops the services that
 * dead processes of this host left under `.proctor/work`, and reports each. Another host's directories are
 * left alone: whether their owner lives cannot be seen from here. With `--older-than`, it also prunes the
 * instances, journals and queue work of runs that finished before then: a store that keeps every run stops
 * growing without bound, while run rows, committed results and bundles stay.
 */
export const runsGc = async (opts: { json?: boolean; olderThan?: number }): Promise<number> =>
  withRunsStore(async (store, config) => {
    const orphans = await reconcileOrphans(store, configuredLeaseMs(config.runner));
    const host = hostname();
    const swept = await sweepWorkRoot(path.join(config.root, workRootDir), {
      ownerGone: (owner) => owner.host === host && ownerProcessState(owner) !== 'alive',
      stopService: (pid, ticks) => stopGroup(pid, ticks, serviceGraceMs),
    });
    const pruned = opts.olderThan === undefined ? undefined : await prune(store, opts.olderThan);
    if (opts.json) {
      const rows = orphans.map((o) => ({ run_id: o.run.runId, status: o.run.status, reason: o.reason }));
      const removed = swept.map((s) => ({ dir: s.dir, kind: s.kind, run_id: s.runId, stopped_pids: s.stopped }));
      const prunedJson = pruned && {
        pruned: { runs: pruned.report.runs, journal_entries: pruned.report.journalEntries },
        store_bytes: { before: pruned.bytesBefore, after: pruned.bytesAfter },
      };
      process.stdout.write(`${JSON.stringify({ orphans: rows, removed, ...prunedJson }, null, 2)}\n`);
      return exitCodes.ok;
    }
    const out: string[] = [];
    if (orphans.length === 0) out.push('no orphaned runs');
    else {
      const rows = orphans.map((o) => [
        o.run.runId,
        o.run.owner ? `${o.run.owner.host}:${o.run.owner.pid}` : '-',
        o.reason,
      ]);
      out.push(
        `${table(['run', 'owner', 'reason'], rows)}\n\n${orphans.length} orphaned run${orphans.length === 1 ? '' : 's'} marked FAILED`,
      );
    }
    for (const s of swept) {
      const stopped = s.stopped.length ? `, stopped pid ${s.stopped.join(', ')}` : '';
      out.push(
        `removed ${s.kind === 'slot' ? 'workspace' : 'run folder'} ${s.dir} (owner pid ${s.owner.pid} gone${stopped})`,
      );
    }
    if (pruned) {
      out.push(
        `pruned the step state of ${pruned.report.runs} finished run(s) (${pruned.report.journalEntries} journal ` +
          `entries); store ${megabytes(pruned.bytesBefore)} → ${megabytes(pruned.bytesAfter)}`,
      );
    }
    process.stdout.write(`${out.join('\n')}\n`);
    return exitCodes.ok;
  });
