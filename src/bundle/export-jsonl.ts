import type { Exporter } from './exporters.js';
import { latestRows } from './latest-rows.js';

/** The latest row of each key, exactly as index.jsonl spells rows, in the order they were written. */
export const exportJsonl: Exporter = function* ({ dir, warn }) {
  const latest = latestRows(dir);
  if (latest.skippedLines) warn(`${latest.skippedLines} line(s) of index.jsonl are not complete rows; skipped`);
  for (const row of latest.rows) yield `${JSON.stringify(row)}\n`;
};
