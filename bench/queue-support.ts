// What the benchmarks of the queue runner (PostgreSQL + Redis) share.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';

/** Runs `fn` on a connection to the database at `url`, closed after. */
export const inDatabase = async <T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
};

/** Removes a bench pool's keys from Redis (its queue's id counter and event stream would stay forever). */
export const dropPool = async (redisUrl: string, pool: string): Promise<void> => {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(`proctor-${pool}`, { connection: redis });
  try {
    await queue.obliterate({ force: true });
  } finally {
    await queue.close();
    redis.disconnect();
  }
};
