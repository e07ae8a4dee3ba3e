import { bootedAt, processStartTime, thisProcess } from '../process-info.js';
import type { RunOwner } from '../store/store.js';

const isProcessAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Whether a recorded owner on this host still runs: `exited`, or `reused` when its pid now names another process. */
export type OwnerProcessState = 'alive' | 'exited' | 'reused';

// Both times come from the same /proc arithmetic, so they agree to the tick; a second of slack absorbs rounding
// in an owner recorded through the uptime fallback of thisProcess (no /proc).
const startSlackMs = 1000;

export const ownerProcessState = (owner: RunOwner): OwnerProcessState => {
  // Without /proc (not Linux) only the pid can be checked; a reused pid then passes for the owner.
  if (bootedAt === undefined) return isProcessAlive(owner.pid) ? 'alive' : 'exited';
  const started = processStartTime(owner.pid);
  if (started === undefined) return 'exited';
  return Math.abs(started - owner.startedAt) <= startSlackMs ? 'alive' : 'reused';
};

export const currentOwner = (): RunOwner => thisProcess();

/** How often an owner marks its runs seen (the seed's OWNER_SEEN_SECONDS). */
export const defaultHeartbeatMs = 30_000;
/** How long a run of another host may go unseen before it is taken for an orphan (OWNER_LEASE_SECONDS). */
export const defaultLeaseMs = 120_000;
