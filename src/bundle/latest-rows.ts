import type { Outcome } from '../records.js';
import { KeyTable } from './key-table.js';
import { forEachRowHead, type RowHead, readRowsAt, type SkippedLine } from './reader.js';
import type { IndexRow } from './row.js';

/** How many rows are parsed at once: enough to amortise the reads, few enough to stay small. */
const batchSize = 4096;

/** A key's latest row, known by its place in index.jsonl and what its head says, without parsing it. */
export interface LatestEntry {
  outcome: Outcome;
  fingerprint: string | undefined;
  /** The latest row's `identity.eval`, when it has an identity. */
  evalPath: string | undefined;
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
  /** Some key's rows disagree on their eval path (or on having one): its rows are not all one case. */
  pathsDiffer: boolean;
  /** Lines that are not complete rows (a torn write): never counted, reported once by the caller. */
  skipped: SkippedLine[];
}

/** Whether the bytes from `from` to `to` spell `text`, without making a string of them unless they may not. */
const spells = (buf: Buffer, from: number, to: number, text: string): boolean => {
  if (to - from === text.length) {
    let i = 0;
    while (i < text.length && text.charCodeAt(i) < 0x80 && text.charCodeAt(i) === buf[from + i]) i++;
    if (i === text.length) return true;
  }
  return buf.toString('utf8', from, to) === text;
};

/** Whether the head's fingerprint is `fingerprint`: compared in its bytes when the head was read from them. */
const sameFingerprint = (head: RowHead, fingerprint: string | undefined): boolean =>
  head.fingerprintFrom < 0 || fingerprint === undefined
    ? head.fingerprint === fingerprint
    : spells(head.bytes, head.fingerprintFrom, head.fingerprintTo, fingerprint);

/**
 * One streaming pass over a bundle's index that keeps, per key, the place of its latest row: memory grows with
 * the bundle's cases, not with how many times they ran, and no row is parsed unless `keyOf` asks for it.
 * `keyOf` names the key a row counts for (default: its own, looked up by its bytes); undefined leaves the row
 * out.
 */
export const readLatest = (dir: string, keyOf?: (head: RowHead) => string | undefined): LatestIndex => {
  const keys = new KeyTable();
  const entries: LatestEntry[] = [];
  let drifted = false;
  let pathsDiffer = false;
  const skipped = forEachRowHead(dir, (head) => {
    let id: number;
    if (keyOf) {
      const key = keyOf(head);
      if (key === undefined) return;
      id = keys.idOfText(key);
    } else {
      id = head.keyFrom < 0 ? keys.idOfText(head.key) : keys.idOf(head.bytes, head.keyFrom, head.keyTo);
    }
    const seen = entries[id];
    if (!seen) {
      entries.push({
        outcome: head.outcome,
        fingerprint: head.fingerprint,
        evalPath: head.evalPath,
        rows: 1,
        offset: head.offset,
        length: head.length,
      });
      return;
    }
    // Updated in place: most keys appear many times, and each row need not leave an object behind. The
    // fingerprint is made a string only when it changed.
    if (!sameFingerprint(head, seen.fingerprint)) {
      drifted = true;
      seen.fingerprint = head.fingerprint;
    }
    if (head.evalPath !== seen.evalPath) {
      pathsDiffer = true;
      seen.evalPath = head.evalPath;
    }
    seen.outcome = head.outcome;
    seen.rows++;
    seen.offset = head.offset;
    seen.length = head.length;
  });
  const latest = new Map<string, LatestEntry>();
  for (let id = 0; id < entries.length; id++) latest.set(keys.keyOf(id), entries[id] as LatestEntry);
  return { dir, latest, drifted, pathsDiffer, skipped };
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
