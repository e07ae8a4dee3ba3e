import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

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

/** When this machine booted (ms since epoch), or undefined without /proc (not Linux). */
export const bootedAt = bootTimeMs();

/** A process's state letter, process group and start (clock ticks since boot) from /proc; undefined when gone. */
export const procStat = (pid: number): { state: string; group: number; startTicks: number } | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTicks = Number(fields[19]);
    return Number.isFinite(startTicks) ? { state: fields[0] ?? '', group: Number(fields[2]), startTicks } : undefined;
  } catch {
    return undefined;
  }
};

/**
 * A running process's start time (ms since epoch), or undefined when it is gone. A zombie runs nothing and
 * owns nothing, so it counts as gone. Comparing the time with a recorded one tells a live process from a new
 * one that reused its pid.
 */
export const processStartTime = (pid: number): number | undefined => {
  const stat = procStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return undefined;
  return (bootedAt ?? 0) + Math.round((stat.startTicks * 1000) / ticksPerSecond);
};

/** This process as an owner of runs, workspaces and services: host, pid and start time. */
export const thisProcess = (() => {
  let self: { host: string; pid: number; startedAt: number } | undefined;
  return () => {
    self ??= {
      host: hostname(),
      pid: process.pid,
      startedAt: processStartTime(process.pid) ?? Math.round(Date.now() - process.uptime() * 1000),
    };
    return self;
  };
})();

/** Signals every process of the group led by `pid`; a group that is already gone is fine. */
export const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group has exited. EPERM cannot happen for our own children.
  }
};
