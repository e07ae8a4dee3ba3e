import { basename } from 'node:path';
import { type Comparison, compareRows } from './compare.js';
import { latestRows } from './latest-rows.js';
import { skippedLinesWarning } from './reader.js';

/** Compares the latest rows of two bundle folders; lines that are not rows are reported through `warn`. */
export const compareBundles = (baseDir: string, headDir: string, warn: (message: string) => void): Comparison => {
  const base = latestRows(baseDir);
  const head = latestRows(headDir);
  if (base.skippedLines) warn(`base: ${skippedLinesWarning(base.skippedLines)}`);
  if (head.skippedLines) warn(`head: ${skippedLinesWarning(head.skippedLines)}`);
  return compareRows({ base: basename(baseDir), head: basename(headDir) }, base.rows, head.rows);
};
