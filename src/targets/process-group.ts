// Commands run in their own process group (spawned detached) so cancel and timeout can end the whole tree:
// a coding agent starts shells, language servers and test runners, and killing only the direct child would
// leave them running and holding its stdout open. POSIX only, like the rest of Proctor's process handling.

import { signalGroup } from '../process-info.js';

const live = new Set<number>();
let exitHookInstalled = false;

/**
 * Track a group until it ends. Detached children are outside execa's `cleanup`, so without this hook
 * an exiting Proctor would leave its agents running.
 */
export const trackGroup = (pid: number): (() => void) => {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const p of live) signalGroup(p, 'SIGKILL');
    });
  }
  live.add(pid);
  return () => live.delete(pid);
};

/** SIGTERM the group now and SIGKILL it after `graceMs`, for agents that ignore or trap SIGTERM. */
export const killGroup = (pid: number, graceMs: number): void => {
  signalGroup(pid, 'SIGTERM');
  setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs).unref();
};
