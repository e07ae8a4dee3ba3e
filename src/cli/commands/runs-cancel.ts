import { type CancelResult, cancelRun } from '../../runners/cancel-run.js';
import { openRunner } from '../../runners/open.js';
import { configuredLeaseMs } from '../../runners/registry.js';
import type { RunRecord } from '../../store/store.js';
import { exitCodes } from '../exit-codes.js';
import { withRunsStore } from './runs-store.js';

const ownerOf = (run: RunRecord): string => (run.owner ? `${run.owner.host} pid ${run.owner.pid}` : 'no process');

const report = (result: CancelResult, waitS: number): { text: string; code: number } => {
  const { run } = result;
  switch (result.kind) {
    case 'terminal':
      return { text: `run ${run.runId} is already ${run.status}; nothing to cancel`, code: exitCodes.ok };
    case 'canceled':
      return { text: `run ${run.runId} ${run.status}`, code: exitCodes.ok };
    case 'orphaned':
      return {
        text:
          `this process does not own run ${run.runId}, and its owner (${ownerOf(run)}) is gone, so nothing can ` +
          `cancel it; \`proctor runs gc\` marks such runs FAILED`,
        code: exitCodes.failed,
      };
    case 'requested': {
      const asked = `this process does not own run ${run.runId} (its owner is ${ownerOf(run)}); asked the owner to cancel it`;
      if (run.status === 'CANCELED') return { text: `${asked}\nrun ${run.runId} CANCELED`, code: exitCodes.ok };
      if (run.status === 'COMPLETED' || run.status === 'FAILED')
        return {
          text: `${asked}\nrun ${run.runId} ${run.status}: it finished before the cancel took effect`,
          code: exitCodes.ok,
        };
      return {
        text: `${asked}\nrun ${run.runId} is still ${run.status} after ${waitS} s; the request stays recorded for its owner`,
        code: exitCodes.failed,
      };
    }
  }
};

/** `proctor runs cancel RUN_ID`: cancels through the owning runner; exits 1 when the run is still going. */
export const runsCancel = async (runId: string, opts: { wait?: number; json?: boolean }): Promise<number> =>
  withRunsStore(async (store, config) => {
    const runner = openRunner(config.runner, store, 1, config.root);
    try {
      const waitS = opts.wait ?? 10;
      const result = await cancelRun(runner, store, runId, {
        waitMs: waitS * 1000,
        ...configuredLeaseMs(config.runner),
      });
      const { text, code } = report(result, waitS);
      if (opts.json) process.stdout.write(`${JSON.stringify({ result: result.kind, run: result.run }, null, 2)}\n`);
      else process.stdout.write(`${text}\n`);
      return code;
    } finally {
      await runner.stop();
    }
  });
