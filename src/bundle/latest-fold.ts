import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readLatest, rowsOf } from './latest-rows.js';
import { readRowHeads } from './reader.js';
import type { IndexRow } from './row.js';
import type { IndexFacts, RowVisitor } from './row-visitor.js';
import { BundleWriter, indexFile } from './writer.js';

/**
 * The latest rows of a bundle being appended to, given to visitors as they are written rather than read back
 * once the run ends: the end of a run then costs the rows written since the last catch-up, not the bundle's.
 * Visitors must see exactly what a pass over the finished bundle gives them (the latest row per key, in the order
 * written), which holds while every appended row is the first of its key: the rows the bundle held before are
 * visited first, and none is superseded. A row that supersedes one already visited (a rerun of a case the bundle
 * held, a key written twice), or a last line without its newline, makes the fold inexact: its caller then makes
 * that pass over the bundle instead, with fresh visitors.
 */
export class LatestFold {
  /** The keys of the rows the bundle held before. */
  private readonly prior: Set<string>;
  private readonly added = new Set<string>();
  /** Where in index.jsonl the next catch-up reads from: the end of the last complete line read. */
  private offset: number;
  private readonly facts: IndexFacts;
  private exact = true;

  /**
   * Visits the rows the bundle holds now; call it while nothing else appends. Its tail is settled first (a torn
   * last line cut, as the first append would cut it), so the rows read are the ones that stay.
   */
  constructor(
    private readonly dir: string,
    private readonly visitors: readonly RowVisitor[],
  ) {
    // A visitor that reads the bundle itself must be given its rows once the bundle is written.
    if (visitors.some((v) => v.afterWriting)) this.exact = false;
    const writer = new BundleWriter(dir);
    writer.open();
    writer.close();
    const file = join(dir, indexFile);
    this.offset = existsSync(file) ? statSync(file).size : 0;
    const index = this.exact ? readLatest(dir) : undefined;
    this.prior = new Set(index?.latest.keys());
    this.facts = { drifted: index?.drifted ?? false, skippedLines: index?.skipped.length ?? 0 };
    if (index) {
      for (const row of rowsOf(dir, index.latest.values())) {
        this.give(row);
        if (!this.exact) break;
      }
    }
  }

  /** Visits the rows appended since the last call. */
  catchUp(): void {
    if (!this.exact) return;
    const read = readRowHeads(
      this.dir,
      (head) => {
        if (!this.exact) return;
        const key = head.key;
        if (this.prior.has(key) || this.added.has(key)) {
          this.exact = false;
          return;
        }
        this.added.add(key);
        this.give(head.row());
      },
      this.offset,
    );
    this.offset = read.end;
    this.facts.skippedLines += read.skipped.length;
    if (read.unterminated) this.exact = false;
  }

  /**
   * Ends the visitors' pass once every row is appended and caught up with: what it learnt of the index, or
   * undefined when the fold is inexact and the visitors must not be used.
   */
  end(): IndexFacts | undefined {
    if (!this.exact) return undefined;
    for (const visitor of this.visitors) visitor.end?.(this.facts);
    return this.facts;
  }

  private give(row: IndexRow): void {
    try {
      for (const visitor of this.visitors) visitor.visit(row);
    } catch {
      // A row a visitor cannot take (an older version's, without identity or usage) must not stop the run before
      // it starts: the pass at the end meets it again and fails there, as it would without the fold.
      this.exact = false;
    }
  }
}
