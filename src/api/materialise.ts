import { bundleGroups } from '../bundle/groups.js';
import { forEachRowHead } from '../bundle/reader.js';
import type { IndexRow } from '../bundle/row.js';
import { BundleWriter } from '../bundle/writer.js';
import type { Store } from '../store/store.js';

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
 * Writes one group's committed results into a bundle, in commit order: each case's artifacts, then its row
 * (the writer's crash-safe append). A result is written once: the run ids already in the bundle are skipped,
 * so a follower killed midway and the `results pull` after it never duplicate a row.
 */
export class Materialiser {
  private cursor = 0;
  private readonly written: Set<string>;
  private readonly writer: BundleWriter;

  /** `fresh`: the group is new to the bundle (the command that submits it), so nothing of it is there yet. */
  constructor(
    private readonly store: Store,
    readonly groupId: string,
    readonly dir: string,
    fresh: boolean,
  ) {
    this.writer = new BundleWriter(dir);
    this.written = fresh ? new Set() : rowsOfGroup(dir, groupId);
  }

  /** Writes what was committed since the last call; returns how many rows it appended. */
  async pull(): Promise<number> {
    let appended = 0;
    for (;;) {
      const page = await this.store.readResults(this.groupId, this.cursor, pageSize);
      // A page's rows go in one append after their artifacts; those written before a failure still go in.
      const rows: IndexRow[] = [];
      try {
        for (const r of page) {
          this.cursor = r.seq;
          if (this.written.has(r.runId)) continue;
          this.writer.writeArtifacts(r.caseKey, r.attempt, r.files);
          rows.push(r.row as unknown as IndexRow);
          this.written.add(r.runId);
        }
      } finally {
        this.writer.appendRows(rows);
      }
      appended += rows.length;
      if (page.length < pageSize) return appended;
    }
  }

  /**
   * Every committed result: PostgreSQL hands out a sequence number when a transaction inserts, not when it
   * commits, so a cursor can pass a result that commits later. Then all are read again from the first (what
   * is written is skipped); when the count says none was passed, only the ones after the cursor.
   */
  async complete(): Promise<number> {
    const appended = await this.pull();
    if ((await this.store.countResults(this.groupId)) === this.written.size) return appended;
    this.cursor = 0;
    return appended + (await this.pull());
  }

  close(): void {
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
