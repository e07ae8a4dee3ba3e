import { randomBytes } from 'node:crypto';

const pad = (n: number): string => String(n).padStart(2, '0');

/** A sortable, readable id: `20261129-201503-k3x9qa` (UTC time, then randomness). */
export const newId = (now = new Date()): string => {
  const date = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
  const time = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  return `${date}-${time}-${randomBytes(4).readUInt32BE(0).toString(36).padStart(6, '0').slice(0, 6)}`;
};

/** An instance id derives from its task id, so the store reads as "which task, which run". */
export const instanceIdFor = (taskId: string, runId: string): string => `${taskId}@${runId}`;
