import { InputError } from '../../errors.js';
import { type RunStatus, runStatuses } from '../../store/store.js';
import { exitCodes } from '../exit-codes.js';
import { table } from '../summary-table.js';
import { withRunsStore } from './runs-store.js';

const time = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString());

/** `proctor runs list`: the run index, newest first. */
export const runsList = async (opts: {
  status?: string;
  group?: string;
  limit?: number;
  json?: boolean;
}): Promise<number> => {
  const status = opts.status?.toUpperCase();
  if (status !== undefined && !(runStatuses as readonly string[]).includes(status)) {
    throw new InputError(`unknown status "${opts.status}"`, undefined, `use one of ${runStatuses.join(', ')}`);
  }
  return withRunsStore(async (store) => {
    const runs = await store.listRuns({
      ...(status ? { status: status as RunStatus } : {}),
      ...(opts.group ? { groupId: opts.group } : {}),
      limit: opts.limit ?? 50,
    });
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
      return exitCodes.ok;
    }
    const rows = runs.map((r) => [
      r.runId,
      r.status,
      r.outcome ?? '-',
      r.target ?? '-',
      r.taskId,
      time(r.createdAt),
      r.owner ? `${r.owner.host}:${r.owner.pid}` : '-',
    ]);
    process.stdout.write(`${table(['run', 'status', 'outcome', 'target', 'task', 'created', 'owner'], rows)}\n`);
    return exitCodes.ok;
  });
};
