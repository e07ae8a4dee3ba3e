import { reconcileOrphans } from '../../runners/reconcile.js';
import { exitCodes } from '../exit-codes.js';
import { table } from '../summary-table.js';
import { withRunsStore } from './runs-store.js';

/** `proctor runs gc`: reconciles orphaned runs now and reports each one it marked FAILED. */
export const runsGc = async (opts: { json?: boolean }): Promise<number> =>
  withRunsStore(async (store, config) => {
    const orphans = await reconcileOrphans(
      store,
      config.runner.config.leaseMs ? { leaseMs: config.runner.config.leaseMs } : {},
    );
    if (opts.json) {
      // An object, so later sweeps (workspaces) add their own key without breaking readers.
      const rows = orphans.map((o) => ({ run_id: o.run.runId, status: o.run.status, reason: o.reason }));
      process.stdout.write(`${JSON.stringify({ orphans: rows }, null, 2)}\n`);
      return exitCodes.ok;
    }
    if (orphans.length === 0) {
      process.stdout.write('no orphaned runs\n');
      return exitCodes.ok;
    }
    const rows = orphans.map((o) => [
      o.run.runId,
      o.run.owner ? `${o.run.owner.host}:${o.run.owner.pid}` : '-',
      o.reason,
    ]);
    process.stdout.write(
      `${table(['run', 'owner', 'reason'], rows)}\n\n${orphans.length} orphaned run${orphans.length === 1 ? '' : 's'} marked FAILED\n`,
    );
    return exitCodes.ok;
  });
