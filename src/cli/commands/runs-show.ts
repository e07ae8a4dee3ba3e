import { InputError } from '../../errors.js';
import { loadProjectConfig } from '../../plan/config.js';
import { openStore } from '../../store/open.js';
import { exitCodes } from '../exit-codes.js';

/** `proctor runs show RUN_ID`: status, owner, timings, and the journal of its instance. */
export const runsShow = async (runId: string, opts: { json?: boolean }): Promise<number> => {
  const config = loadProjectConfig(process.cwd(), process.env);
  const store = await openStore(config.store.url, config.root);
  try {
    const run = await store.getRun(runId);
    if (!run) throw new InputError(`no run "${runId}"`, undefined, 'see `proctor runs list`');
    const journal = await store.readJournal(run.instanceId);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ run, journal }, null, 2)}\n`);
      return exitCodes.ok;
    }
    const at = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());
    const lines = [
      `run       ${run.runId}`,
      `status    ${run.status}${run.outcome ? ` (${run.outcome})` : ''}`,
      `task      ${run.taskId}`,
      `instance  ${run.instanceId}`,
      `group     ${run.groupId}`,
      `owner     ${run.owner ? `${run.owner.host} pid ${run.owner.pid}, seen ${at(run.seenAt)}` : '-'}`,
      `created   ${at(run.createdAt)}`,
      `started   ${at(run.startedAt)}`,
      `finished  ${at(run.finishedAt)}`,
      ...(run.error ? [`error     ${run.error.kind}: ${run.error.message}`] : []),
      '',
      'journal:',
      ...journal.map(
        (e) => `  ${e.seq}. ${e.stepId} (attempt ${e.attempt}) ${e.ops.map((o) => `${o.op} ${o.path}`).join(', ')}`,
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return exitCodes.ok;
  } finally {
    await store.close();
  }
};
