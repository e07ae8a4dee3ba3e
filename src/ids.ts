import { randomBytes } from 'node:crypto';

const pad = (n: number): string => String(n).padStart(2, '0');

/** A sortable, readable id: `20261129-201503-k3x9qa` (UTC time, then randomness). */
export const newId = (now = new Date()): string => {
  const date = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
  const time = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  return `${date}-${time}-${randomBytes(4).readUInt32BE(0).toString(36).padStart(6, '0').slice(0, 6)}`;
};

/**
 * An instance id derives from its run and task ids: "which run, which task". The run id leads because the store
 * keys the instances and the journal by it: an eval's task ids start with a hash, which scattered each new row to
 * a random page of those b-trees, where the run id (its group's, then a counter) keeps a run's rows together.
 */
export const instanceIdFor = (taskId: string, runId: string): string => `${runId}@${taskId}`;
