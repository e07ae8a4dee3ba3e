import type { Redis } from 'ioredis';
import { printableUrl } from '../printable-url.js';

/** How long a submitter waits to learn the policy: a Redis that is down must not hold up the submit. */
const checkTimeoutMs = 2000;

/**
 * Why this Redis may lose queued jobs, or undefined when its `maxmemory-policy` is `noeviction` (BullMQ's
 * requirement) or cannot be read. Read from INFO, which managed services that disable CONFIG still answer.
 */
export const evictionWarning = async (redis: Redis, url: string): Promise<string | undefined> => {
  const info = await Promise.race([
    redis.info('memory'),
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), checkTimeoutMs).unref()),
  ]).catch(() => undefined);
  const policy = info && /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (!policy || policy === 'noeviction') return undefined;
  return (
    `Redis at ${printableUrl(url)} has maxmemory-policy ${policy}: under memory pressure it may evict queued ` +
    'jobs, and their cases then wait for the reconciler; set maxmemory-policy noeviction (redis.conf, or ' +
    '`redis-cli CONFIG SET maxmemory-policy noeviction`)'
  );
};
