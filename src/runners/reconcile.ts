import { hostname } from 'node:os';
import type { OwnerSummary, RunOwner, RunRecord, Store } from '../store/store.js';
import { defaultLeaseMs, ownerProcessState } from './owner.js';

export interface ReconcileOptions {
  /** A run of another host is orphaned once unseen this long. */
  leaseMs?: number;
  now?: number;
  /** This host's name, as owners record it. */
  host?: string;
}

/** A run the reconciler marked FAILED, and why its owner counts as gone. */
export interface Orphan {
  run: RunRecord;
  reason: string;
}

const who = (owner: RunOwner): string => `${owner.host} pid ${owner.pid}`;

/** Why an owner's runs are orphaned, or undefined when the owner may still be executing them. */
const goneReason = (summary: OwnerSummary, host: string, leaseMs: number, now: number): string | undefined => {
  const { owner } = summary;
  if (!owner) return 'the run names no owner, so no process will ever finish it';
  if (owner.host === host) {
    const state = ownerProcessState(owner);
    if (state === 'exited') return `its owner ${who(owner)} has exited`;
    if (state === 'reused') return `its owner ${who(owner)} has exited (the pid now names another process)`;
    return undefined;
  }
  // Another host's processes cannot be inspected: its silence past the lease is the only evidence.
  if (now - summary.oldestSeenAt < leaseMs) return undefined;
  const lease = leaseMs >= 1000 ? `${leaseMs / 1000} s` : `${leaseMs} ms`;
  return `its owner ${who(owner)} has not been seen within its lease of ${lease}`;
};

/**
 * Marks FAILED every non-terminal run whose owner is gone, and only those: on this host the owner's pid is not
 * running or started at another time; on another host it has not renewed `seen_at` within the lease; a run
 * naming no owner is an orphan. A live owner's runs, QUEUED or RUNNING, are never touched. Each sweep is one
 * conditional UPDATE per owner, so a run claimed or renewed in the meantime is spared.
 */
export const reconcileOrphans = async (store: Store, options: ReconcileOptions = {}): Promise<Orphan[]> => {
  const now = options.now ?? Date.now();
  const host = options.host ?? hostname();
  const leaseMs = options.leaseMs ?? defaultLeaseMs;
  const orphans: Orphan[] = [];
  for (const summary of await store.runOwners()) {
    const reason = goneReason(summary, host, leaseMs, now);
    if (!reason) continue;
    const remote = summary.owner !== null && summary.owner.host !== host;
    const failed = await store.failOrphans(
      { owner: summary.owner, ...(remote ? { seenBefore: now - leaseMs } : {}) },
      {
        status: 'FAILED',
        outcome: 'error',
        error: { kind: 'internal', message: `orphaned: ${reason}`, retryable: false },
      },
      now,
    );
    for (const run of failed) orphans.push({ run, reason });
  }
  return orphans;
};
