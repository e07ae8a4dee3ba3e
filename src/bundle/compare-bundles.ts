import { basename } from 'node:path';
import { type Comparison, HeadComparison } from './compare.js';
import { latestRows } from './latest-rows.js';
import { skippedLinesWarning } from './reader.js';
import type { IndexRow } from './row.js';
import { type RowVisitor, visitLatest } from './row-visitor.js';

/**
 * A comparison with a base bundle, given the head's latest rows by a pass over the head (at the end of a run, the
 * one that summarises it). The base is read at the first head row, or at the result, not before: a base that is
 * the head's own bundle is read as the run left it.
 */
export class BundleComparison implements RowVisitor {
  private comparison: HeadComparison | undefined;

  constructor(
    private readonly baseDir: string,
    private readonly warn: (message: string) => void,
  ) {}

  private opened(): HeadComparison {
    if (!this.comparison) {
      const base = latestRows(this.baseDir);
      if (base.skippedLines) this.warn(`base: ${skippedLinesWarning(base.skippedLines)}`);
      this.comparison = new HeadComparison(base.rows);
    }
    return this.comparison;
  }

  visit(row: IndexRow): void {
    this.opened().visit(row);
  }

  /** `headSkipped`: lines of the head's index that are not rows, as its pass found them. */
  result(headDir: string, headSkipped: number, tolerance = 0): Comparison {
    const comparison = this.opened();
    if (headSkipped) this.warn(`head: ${skippedLinesWarning(headSkipped)}`);
    return comparison.result({ base: basename(this.baseDir), head: basename(headDir) }, tolerance);
  }
}

/**
 * Compares the latest rows of two bundle folders; lines that are not rows are reported through `warn`.
 * `tolerance`: how many fewer passing cases than the base the gate allows.
 */
export const compareBundles = (
  baseDir: string,
  headDir: string,
  warn: (message: string) => void,
  tolerance = 0,
): Comparison => {
  const comparison = new BundleComparison(baseDir, warn);
  const head = visitLatest(headDir, [comparison]);
  return comparison.result(headDir, head.skippedLines, tolerance);
};
