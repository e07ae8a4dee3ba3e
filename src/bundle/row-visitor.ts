import { readLatest, rowsOf } from './latest-rows.js';
import type { IndexRow } from './row.js';

/**
 * A reader of a bundle's latest rows, given them one at a time in the order they were written. It keeps only what
 * it needs (counts, a capped list), so one pass over the index serves every reader at the end of a run and none
 * holds the rows.
 */
export interface RowVisitor {
  visit(row: IndexRow): void;
  /** Told, once every row was given, what the pass learnt of the index besides its rows. */
  end?(index: IndexFacts): void;
  /** It reads the bundle it is given rows of (a comparison with that bundle): give it rows once it is written. */
  readonly afterWriting?: boolean;
}

/** What a pass learns of the index besides its rows. */
export interface IndexFacts {
  /** Some key's rows disagree on its fingerprint. */
  drifted: boolean;
  /** Lines that are not complete rows (a torn write). */
  skippedLines: number;
}

/** One pass over the latest row per key of a bundle, each row given to every visitor in turn. */
export const visitLatest = (dir: string, visitors: readonly RowVisitor[]): IndexFacts => {
  const index = readLatest(dir);
  for (const row of rowsOf(dir, index.latest.values())) for (const visitor of visitors) visitor.visit(row);
  const facts = { drifted: index.drifted, skippedLines: index.skipped.length };
  for (const visitor of visitors) visitor.end?.(facts);
  return facts;
};
