import { createRequire } from 'node:module';

/**
 * One of Node's own modules, required on its first use rather than imported: every command loads the step, grader
 * and target registries, and each of these loads more of Node's modules with it, a few ms of the start of every
 * command that never uses them (test/cli/start-up.test.ts counts what a command loads).
 */
const onFirstUse = <T>(name: string): (() => T) => {
  let loaded: T | undefined;
  return () => {
    loaded ??= createRequire(import.meta.url)(name) as T;
    return loaded;
  };
};

/** Most commands start no thread. */
export const workerThreads = onFirstUse<typeof import('node:worker_threads')>('node:worker_threads');
/** Only the steps and graders that spawn a program (it loads node:dgram too). */
export const childProcess = onFirstUse<typeof import('node:child_process')>('node:child_process');
/** Only an https connection (it loads secure contexts and its socket wrap). */
export const tls = onFirstUse<typeof import('node:tls')>('node:tls');
