import type { Exporter } from './exporters.js';
import { latestRows } from './latest-rows.js';
import { skippedLinesWarning } from './reader.js';

/** The latest row of each key, exactly as index.jsonl spells rows, in the order they were written. */
export const exportJsonl: Exporter = function* ({ dir, warn }) {
  const latest = latestRows(dir);
  if (latest.skippedLines) warn(skippedLinesWarning(latest.skippedLines));
  for (const row of latest.rows) yield `${JSON.stringify(row)}\n`;
};
