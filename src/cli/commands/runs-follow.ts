import { follow } from '../../api/follow.js';
import { pullResults } from '../../api/pull-results.js';
import { InputError } from '../../errors.js';
import { openRunner } from '../../runners/open.js';
import { exitCodes } from '../exit-codes.js';
import { ProgressDisplay } from '../progress-display.js';
import { signalExitCode } from '../signals.js';
import { withRunsStore } from './runs-store.js';

/**
 * `proctor runs follow GROUP`: re-attaches to an eval run (after `--detach`, or a follower that died), follows
 * the store until every case has ended, then writes the run's bundle from the committed results (as `results
 * pull` does). Exits as `eval run` would: 0 when every case passed, else 1.
 */
export const runsFollow = async (groupId: string, opts: { quiet?: boolean }): Promise<number> =>
  withRunsStore(async (store, config) => {
    const runs = await store.groupProgress(groupId);
    const total = runs.reduce((n, r) => n + r.count, 0);
    if (total === 0) throw new InputError(`no eval run "${groupId}"`, undefined, 'see `proctor runs list`');
    const display = new ProgressDisplay(process.stderr, opts.quiet ?? false);
    let received: 'SIGINT' | 'SIGTERM' | undefined;
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    // Only following ends: the run belongs to its workers, and `runs cancel` is how to stop it.
    const onSignal = (signal: NodeJS.Signals): void => {
      received = signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM';
      stop();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    // Submits nothing: it only tells which targets the runs' workers hold back after a 429.
    const runner = openRunner(config.runner, store, 1, config.root);
    try {
      const p = await follow(store, groupId, total, {
        intervalMs: 200,
        onProgress: (progress) => display.update(progress),
        wantsProgress: () => display.wantsUpdate(),
        stopped,
        rateLimited: () => runner.rateLimited?.() ?? Promise.resolve([]),
      });
      process.stdout.write(
        `${groupId}: ${p.done}/${p.total} done · ${p.passed} passed · ${p.failed} failed · ${p.error} errors · ${p.canceled} canceled\n`,
      );
      if (received) return signalExitCode(received);
      const pulled = await pullResults({ config, cwd: process.cwd(), runId: groupId });
      process.stdout.write(`bundle: ${pulled.dir}\n`);
      return p.passed === p.total ? exitCodes.ok : exitCodes.failed;
    } finally {
      await runner.stop();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  });
