import { forEachRowHead, readRowsAt } from './reader.js';
import type { IndexRow } from './row.js';

/** How many rows are parsed at once: enough to amortise the reads, few enough to stay small. */
const batchSize = 4096;

export interface LatestRows {
  /** The latest row of each key, in the order those rows were written; read lazily, a batch at a time. */
  rows: Iterable<IndexRow>;
  /** Lines of index.jsonl that are not complete rows (a torn last line after a crash). */
  skippedLines: number;
}

/**
 * Like `digestIndex`, but never holds the parsed rows: only the place of each key's latest row stays in
 * memory, so an exporter or a comparison can pass over a million-case bundle in bounded memory.
 */
export const latestRows = (dir: string): LatestRows => {
  const places = new Map<string, { offset: number; length: number }>();
  const skipped = forEachRowHead(dir, (head) => {
    places.set(head.key, { offset: head.offset, length: head.length });
  });
  const ordered = [...places.values()].sort((a, b) => a.offset - b.offset);
  places.clear();
  function* rows(): Generator<IndexRow> {
    for (let i = 0; i < ordered.length; i += batchSize) yield* readRowsAt(dir, ordered.slice(i, i + batchSize));
  }
  return { rows: rows(), skippedLines: skipped.length };
};
