import { readLatest, rowsOf } from './latest-rows.js';
import { type IndexRow, parseRow } from './row.js';
import type { IndexFacts, RowVisitor } from './row-visitor.js';
import { BundleWriter } from './writer.js';

/**
 * The latest rows of a bundle being appended to, given to visitors as they are written rather than read back
 * once the run ends: the end of a run then costs nothing more, and the rows appended are taken from the lines the
 * writer appended, not read back from index.jsonl.
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
  private readonly facts: IndexFacts;
  private exact = true;

  /**
   * Visits the rows the bundle holds now; call it while nothing else appends. Its tail is settled first (a torn
   * last line cut, as the first append would cut it), so the rows read are the ones that stay.
   */
  constructor(
    dir: string,
    private readonly visitors: readonly RowVisitor[],
  ) {
    // A visitor that reads the bundle itself must be given its rows once the bundle is written.
    if (visitors.some((v) => v.afterWriting)) this.exact = false;
    const writer = new BundleWriter(dir);
    writer.open();
    writer.close();
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

  /**
   * Visits rows as they were appended to index.jsonl, each line whole: the command writing the bundle holds its
   * lock, so the lines its writer appended (BundleWriter.flush) are the ones a read would find.
   */
  visitLines(lines: readonly string[]): void {
    for (const line of lines) {
      if (!this.exact) return;
      const row = parseRow(line);
      if (!row) {
        this.facts.skippedLines++;
        continue;
      }
      if (this.prior.has(row.key) || this.added.has(row.key)) {
        this.exact = false;
        return;
      }
      this.added.add(row.key);
      this.give(row);
    }
  }

  /**
   * Ends the visitors' pass once every row appended has been visited: what it learnt of the index, or
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
