import { readdirSync } from 'node:fs';
import { procStat, signalGroup } from '../process-info.js';
import { sleep } from '../sleep.js';

/**
 * A process's start time in clock ticks since boot (Linux /proc), or null when unknown. A teardown from the
 * stored instance compares it with the recorded one, so a pid the OS reused for another program is left alone.
 */
export const startTicks = (pid: number): number | null => procStat(pid)?.startTicks ?? null;

/**
 * Whether any live process is in group `pgid`. Zombies do not count: an exited grandchild waits for the
 * container's init to reap it, and a signal-0 probe would call the group alive until then.
 */
const groupAlive = (pgid: number): boolean => {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
  return pids.some((p) => {
    const stat = procStat(Number(p));
    return stat !== undefined && stat.group === pgid && stat.state !== 'Z';
  });
};

/**
 * Ends the process group `pid` leads: SIGTERM, then SIGKILL after `graceMs`; resolves once it is gone.
 * `expectTicks` guards against a reused pid: a mismatch leaves the process alone.
 */
export const stopGroup = async (pid: number, expectTicks: number | null, graceMs: number): Promise<void> => {
  if (expectTicks !== null) {
    const now = startTicks(pid);
    if (now !== null && now !== expectTicks) return;
  }
  if (!groupAlive(pid)) return;
  signalGroup(pid, 'SIGTERM');
  const until = Date.now() + graceMs;
  while (groupAlive(pid) && Date.now() < until) await sleep(25);
  if (groupAlive(pid)) signalGroup(pid, 'SIGKILL');
  const hardUntil = Date.now() + 2000;
  while (groupAlive(pid) && Date.now() < hardUntil) await sleep(25);
};
