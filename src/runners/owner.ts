import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { RunOwner } from '../store/store.js';

// Linux reports process start in clock ticks since boot; USER_HZ is 100 on every mainstream kernel.
const ticksPerSecond = 100;

const bootTimeMs = (): number | undefined => {
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('btime '));
    return line ? Number(line.slice(6)) * 1000 : undefined;
  } catch {
    return undefined;
  }
};

const boot = bootTimeMs();

/**
 * A process's start time (ms since epoch) from /proc, or undefined when it is not running. Comparing it
 * with the recorded one tells a live owner from a new process that reused its pid.
 */
const processStartTime = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A killed process stays a zombie until its parent reaps it: it runs nothing and owns nothing.
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    const ticks = Number(fields[19]);
    return (boot ?? 0) + Math.round((ticks * 1000) / ticksPerSecond);
  } catch {
    return undefined;
  }
};

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
// in an owner recorded through the uptime fallback below.
const startSlackMs = 1000;

export const ownerProcessState = (owner: RunOwner): OwnerProcessState => {
  // Without /proc (not Linux) only the pid can be checked; a reused pid then passes for the owner.
  if (boot === undefined) return isProcessAlive(owner.pid) ? 'alive' : 'exited';
  const started = processStartTime(owner.pid);
  if (started === undefined) return 'exited';
  return Math.abs(started - owner.startedAt) <= startSlackMs ? 'alive' : 'reused';
};

let self: RunOwner | undefined;

export const currentOwner = (): RunOwner => {
  self ??= {
    host: hostname(),
    pid: process.pid,
    startedAt: processStartTime(process.pid) ?? Math.round(Date.now() - process.uptime() * 1000),
  };
  return self;
};

/** How often an owner marks its runs seen (the seed's OWNER_SEEN_SECONDS). */
export const defaultHeartbeatMs = 30_000;
/** How long a run of another host may go unseen before it is taken for an orphan (OWNER_LEASE_SECONDS). */
export const defaultLeaseMs = 120_000;
