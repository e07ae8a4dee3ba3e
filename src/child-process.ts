import { createRequire } from 'node:module';

type ChildProcess = typeof import('node:child_process');
let loaded: ChildProcess | undefined;

/**
 * node:child_process, required on first use rather than imported: every run loads the step and grader registries,
 * and the module (with node:dgram, which it loads) was a few ms of the start of each command that spawns nothing.
 */
export const childProcess = (): ChildProcess => {
  loaded ??= createRequire(import.meta.url)('node:child_process') as ChildProcess;
  return loaded;
};
