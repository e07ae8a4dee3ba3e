import { createRequire } from 'node:module';

type WorkerThreads = typeof import('node:worker_threads');
let loaded: WorkerThreads | undefined;

/**
 * node:worker_threads, required on first use rather than imported: most commands start no thread, and each would
 * otherwise load the module on start (test/cli/start-up.test.ts counts what a dry run loads).
 */
export const workerThreads = (): WorkerThreads => {
  loaded ??= createRequire(import.meta.url)('node:worker_threads') as WorkerThreads;
  return loaded;
};
