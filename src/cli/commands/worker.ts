import { setFlagsFromString } from 'node:v8';
import { InputError } from '../../errors.js';
import { loadProjectConfig } from '../../plan/config.js';
import { printableUrl } from '../../printable-url.js';
import { QueueWorker } from '../../runners/worker.js';
import { openStore } from '../../store/open.js';
import { exitCodes } from '../exit-codes.js';
import { signalExitCode } from '../signals.js';

export interface WorkerOptions {
  concurrency?: number;
  pool?: string;
  /** Seconds. */
  drainTimeout?: number;
}

/**
 * `proctor worker`: executes the cases of the project's queue runner until a signal. The first SIGTERM or
 * SIGINT drains (no new cases; running ones finish or, after the drain timeout, go back to the queue); a
 * second exits at once. Exits 1 when Redis stays out of reach, so a supervisor restarts it.
 */
export const worker = async (opts: WorkerOptions): Promise<number> => {
  // bin/proctor.js bounds the heap's growth (1.5× what the last full collection kept) for a command that holds a
  // plan. A worker holds none, only its cases in flight: 0 is V8's own policy, under which a new worker's first
  // 1,000 cases took 1 full collection instead of 3 (node --trace-gc, 1 worker, 5 ms model).
  setFlagsFromString('--heap-growing-percent=0');
  const config = loadProjectConfig(process.cwd(), process.env);
  if (config.runner.kind !== 'queue') {
    throw new InputError(
      `${config.file ? 'proctor.toml configures' : 'no proctor.toml here or above: the default is'} runner kind "${config.runner.kind}"; a worker serves only a queue runner`,
      config.file ? { file: 'proctor.toml' } : undefined,
      'set [runner] kind = "queue" with [store] url = "postgres://…", in the project the worker runs from',
    );
  }
  const queueConfig = {
    ...config.runner.config,
    ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
    ...(opts.pool !== undefined ? { pool: opts.pool } : {}),
    ...(opts.drainTimeout !== undefined ? { drainTimeoutMs: opts.drainTimeout * 1000 } : {}),
  };
  const store = await openStore(config.store);
  const queueWorker = new QueueWorker(store, queueConfig, { ...process.env }, config.root);
  let received: 'SIGINT' | 'SIGTERM' | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    const which = signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM';
    if (received) process.exit(signalExitCode(which));
    received = which;
    process.stderr.write(`${signal}: draining (again to exit now)\n`);
    void queueWorker.drain();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const end = await queueWorker.run({
      ready: () => process.stderr.write(`worker on pool ${queueConfig.pool}, concurrency ${queueConfig.concurrency}\n`),
      warn: (warning) => process.stderr.write(`warning: ${warning}\n`),
    });
    if (end === 'redis_lost') {
      process.stderr.write(
        `error: lost the connection to Redis at ${printableUrl(queueConfig.redis)} and it did not come back\n`,
      );
      return exitCodes.failed;
    }
    return received ? signalExitCode(received) : exitCodes.ok;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await queueWorker.close();
    await store.close();
  }
};
