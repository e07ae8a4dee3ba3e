import { bundleGroups } from '../bundle/groups.js';
import { forEachRowHead } from '../bundle/reader.js';
import { BundleWriter } from '../bundle/writer.js';
import type { ResultWatch, Store } from '../store/store.js';

/** Committed results read at a time: a page's files stay a few MB however large the run. */
const pageSize = 200;

/** The run ids of a group's rows a bundle already holds: a re-pull skips them. */
const rowsOfGroup = (dir: string, groupId: string): Set<string> => {
  const runs = new Set<string>();
  forEachRowHead(dir, (head) => {
    const row = head.row();
    if (row.group_id === groupId) runs.add(row.run_id);
  });
  return runs;
};

/**
 * Writes one group's committed results into a bundle, in commit order: each case's result (packed, or its
 * folder of artifacts), then its row (the writer's crash-safe append), the row being the text the store holds.
 * A result this process committed is written from the copy the store held for it (`watchResults`), not read
 * back; others (a queue worker's, a dead follower's) are read from the store. A result is written once: the run
 * ids already in the bundle are skipped, so a follower killed midway and the `results pull` after it never
 * duplicate a row.
 */
export class Materialiser {
  private cursor = 0;
  /**
   * The run ids of the group the bundle holds, when a read may meet one again: from the start when the bundle
   * had rows of the group, else only once `complete` reads from the first. Until then the cursor only moves
   * forward and a count is enough, so a fresh group's run keeps no set that grows with its size.
   */
  private written: Set<string> | undefined;
  private count = 0;
  private readonly writer: BundleWriter;
  private readonly watch: ResultWatch;

  /**
   * `fresh`: the group is new to the bundle (the command that submits it), so nothing of it is there yet.
   * `onAppended` is given the index lines of each append, as written.
   */
  constructor(
    private readonly store: Store,
    readonly groupId: string,
    readonly dir: string,
    fresh: boolean,
    private readonly onAppended?: (lines: readonly string[]) => void,
  ) {
    this.writer = new BundleWriter(dir);
    this.written = fresh ? undefined : rowsOfGroup(dir, groupId);
    this.count = this.written?.size ?? 0;
    this.watch = store.watchResults(groupId);
  }

  /** Writes what was committed since the last call; returns how many rows it appended. */
  async pull(): Promise<number> {
    let appended = 0;
    for (;;) {
      const heads = await this.store.readResultHeads(this.groupId, this.cursor, pageSize);
      const fresh = heads.filter((h) => !this.written?.has(h.runId));
      const held = new Map(fresh.map((h) => [h.runId, this.watch.take(h.runId)]));
      // Only what this process did not commit itself is read, in one query for the page.
      const read = await this.store.readResultTexts(fresh.filter((h) => !held.get(h.runId)).map((h) => h.seq));
      const texts = new Map(read.map((r) => [r.runId, r]));
      // A page's packed results go in one write and its rows in one append after them; the cases written before
      // a failure still go in.
      let rows = 0;
      try {
        for (const h of heads) {
          this.cursor = h.seq;
          const r = held.get(h.runId) ?? texts.get(h.runId);
          if (!r) continue;
          this.writer.writeCase(r.caseKey, r.attempt, r.files, r.row);
          rows++;
          this.written?.add(r.runId);
        }
      } finally {
        const lines = this.writer.flush();
        this.count += rows;
        if (lines.length > 0) this.onAppended?.(lines);
      }
      appended += rows;
      if (heads.length < pageSize) return appended;
    }
  }

  /**
   * Every committed result: PostgreSQL hands out a sequence number when a transaction inserts, not when it
   * commits, so a cursor can pass a result that commits later. Then all are read again from the first (what
   * the bundle holds is skipped); when the count says none was passed, only the ones after the cursor.
   */
  async complete(): Promise<number> {
    const appended = await this.pull();
    if ((await this.store.countResults(this.groupId)) === this.count) return appended;
    this.written ??= rowsOfGroup(this.dir, this.groupId);
    this.cursor = 0;
    return appended + (await this.pull());
  }

  close(): void {
    this.watch.close();
    this.writer.close();
  }
}

/** Completes a bundle with whatever its groups committed that it lacks (a follower killed midway). */
export const completeBundle = async (store: Store, dir: string): Promise<number> => {
  let appended = 0;
  for (const groupId of bundleGroups(dir)) {
    const m = new Materialiser(store, groupId, dir, false);
    try {
      appended += await m.complete();
    } finally {
      m.close();
    }
  }
  return appended;
};
