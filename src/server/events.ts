import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import type { FollowedResult } from '../store/result-cursor.js';
import type { Store } from '../store/store.js';
import type { GroupListing, Summaries } from './summaries.js';

const heartbeatMs = 15_000;
const pageSize = 200;

export interface EventOptions {
  pollMs: number;
}

/** A result as an event carries it: the case table row (the store read no artifact file). */
const resultEvent = ({ cursor: _cursor, ...row }: FollowedResult) => row;

/**
 * Polls while the client listens and writes what changed. Each `poll` returns whether it wrote a full page,
 * so a backlog drains without waiting; a comment line every 15 s keeps proxies from closing an idle stream.
 */
const pollLoop = async (stream: SSEStreamingApi, options: EventOptions, poll: () => Promise<boolean>) => {
  let beat = Date.now();
  while (!stream.aborted) {
    const more = await poll();
    if (Date.now() - beat > heartbeatMs) {
      await stream.write(': ping\n\n');
      beat = Date.now();
    }
    if (!more) await stream.sleep(options.pollMs);
  }
};

/**
 * A group's live events. `result` events carry the store's result cursors as ids, which are durable and in an
 * order no later commit can precede: after a server restart a client resuming from `Last-Event-ID` gets
 * exactly the commits after it.
 * `progress` is a snapshot of the group's counts (state, not a delta), sent whenever it changes.
 */
export const groupEvents = (
  c: Context,
  store: Store,
  summaries: Summaries,
  groupId: string,
  after: string,
  options: EventOptions,
) =>
  streamSSE(c, async (stream) => {
    let cursor = after;
    let progress = '';
    let settled = false;
    await stream.writeSSE({ event: 'ready', data: JSON.stringify({ after }), retry: 1000 });
    await pollLoop(stream, options, async () => {
      // Counting a big group is the costly read: once it has finished, its counts are final.
      if (!settled) {
        settled = !(await summaries.isLive(groupId));
        const now = JSON.stringify(await store.groupProgress(groupId));
        if (now !== progress) {
          progress = now;
          await stream.writeSSE({ event: 'progress', data: now });
        }
      }
      const rows = await store.followResults(groupId, cursor, pageSize);
      for (const r of rows) {
        await stream.writeSSE({ id: r.cursor, event: 'result', data: JSON.stringify(resultEvent(r)) });
        cursor = r.cursor;
      }
      return rows.length === pageSize;
    });
  });

/** The runs list's live feed: a fresh snapshot of the newest groups whenever one changes. */
export const runsEvents = (
  c: Context,
  summaries: { groups(limit: number): Promise<GroupListing[]> },
  limit: number,
  options: EventOptions,
) =>
  streamSSE(c, async (stream) => {
    let last = '';
    await pollLoop(stream, options, async () => {
      const now = JSON.stringify(await summaries.groups(limit));
      if (now !== last) {
        last = now;
        await stream.writeSSE({ event: 'runs', data: now });
      }
      return false;
    });
  });
