import type { Outcome } from '../records.js';
import { forEachRowHead, type RowHead, readRowsAt, type SkippedLine } from './reader.js';
import type { IndexRow } from './row.js';

/** How many rows are parsed at once: enough to amortise the reads, few enough to stay small. */
const batchSize = 4096;

/** A key's latest row, known by its place in index.jsonl and what its head says, without parsing it. */
export interface LatestEntry {
  outcome: Outcome;
  fingerprint: string | undefined;
  /** How many rows the key has. */
  rows: number;
  /** The latest row's place in index.jsonl, to parse it when a reader needs more than its head. */
  offset: number;
  length: number;
}

/** The latest row per key of a bundle: the one reading that summaries, exports, comparisons and resume share. */
export interface LatestIndex {
  dir: string;
  /** By key, in the order keys first appear. */
  latest: Map<string, LatestEntry>;
  /** Some key's rows disagree on its fingerprint: what decides its result changed between runs. */
  drifted: boolean;
  /** Lines that are not complete rows (a torn write): never counted, reported once by the caller. */
  skipped: SkippedLine[];
}

/**
 * One streaming pass over a bundle's index that keeps, per key, the place of its latest row: memory grows with
 * the bundle's cases, not with how many times they ran, and no row is parsed unless `keyOf` asks for it.
 * `keyOf` names the key a row counts for (default: its own); undefined leaves the row out.
 */
export const readLatest = (
  dir: string,
  keyOf: (head: RowHead) => string | undefined = (head) => head.key,
): LatestIndex => {
  const latest = new Map<string, LatestEntry>();
  let drifted = false;
  const skipped = forEachRowHead(dir, (head) => {
    const key = keyOf(head);
    if (key === undefined) return;
    const seen = latest.get(key);
    if (!seen) {
      latest.set(key, {
        outcome: head.outcome,
        fingerprint: head.fingerprint,
        rows: 1,
        offset: head.offset,
        length: head.length,
      });
      return;
    }
    // Updated in place: most keys appear many times, and each row need not leave an object behind.
    if (seen.fingerprint !== head.fingerprint) drifted = true;
    seen.outcome = head.outcome;
    seen.fingerprint = head.fingerprint;
    seen.rows++;
    seen.offset = head.offset;
    seen.length = head.length;
  });
  return { dir, latest, drifted, skipped };
};

/** Parses the rows of `entries` a batch at a time, in the order they were written. */
export function* rowsOf(dir: string, entries: Iterable<LatestEntry>): Generator<IndexRow> {
  const ordered = [...entries].sort((a, b) => a.offset - b.offset);
  for (let i = 0; i < ordered.length; i += batchSize) yield* readRowsAt(dir, ordered.slice(i, i + batchSize));
}

export interface LatestRows {
  /** The latest row of each key, in the order those rows were written; read lazily, a batch at a time. */
  rows: Iterable<IndexRow>;
  /** Lines of index.jsonl that are not complete rows (a torn write). */
  skippedLines: number;
}

/** The latest rows for an exporter or a comparison, in bounded memory: parsed only as they are iterated. */
export const latestRows = (dir: string): LatestRows => {
  const index = readLatest(dir);
  return { rows: rowsOf(dir, index.latest.values()), skippedLines: index.skipped.length };
};
