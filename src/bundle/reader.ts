import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Outcome } from '../records.js';
import { type IndexRow, parseRow, rowSchema } from './row.js';
import { indexFile } from './writer.js';

/** A line of index.jsonl that is not a complete row (a torn write after a crash): reported, never fatal. */
export interface SkippedLine {
  line: number;
  text: string;
}

/** The one wording of the warning every reader gives for skipped lines (`where`: the index read). */
export const skippedLinesWarning = (count: number, where = 'index.jsonl'): string =>
  `${count} line(s) of ${where} are not complete rows (a torn write); ignored`;

/** What most readers need of a row, read without parsing it; `row()` parses it whole. One object is reused
 * for every row: read it during the callback, copy what you keep. */
export interface RowHead {
  key: string;
  outcome: Outcome;
  fingerprint: string | undefined;
  /** `identity.eval`, when the row has an identity. */
  evalPath: string | undefined;
  /** Where the row's line sits in index.jsonl, to read it again later. */
  offset: number;
  length: number;
  /** Parses the whole row; valid only during the callback. */
  row(): IndexRow;
}

const chunkBytes = 8 * 1024 * 1024;
const newline = 0x0a;
const quote = 0x22;
const backslash = 0x5c;

// Rows this version writes start so, list key, fingerprint and outcome right after the identity, and end
// with the artifacts folder.
const prefix = Buffer.from(`{"schema":"${rowSchema}","identity":{"eval":"`);
const afterIdentity = Buffer.from('},"key":"');
const fingerprintTag = Buffer.from(',"fingerprint":"');
const outcomeTag = Buffer.from(',"outcome":"');
const artifactsTag = Buffer.from(',"artifacts":"');
const rowEnd = Buffer.from('"}');

/** The string value starting at `from` up to its closing quote; undefined if it holds an escape. */
const stringAt = (buf: Buffer, from: number, end: number): [string, number] | undefined => {
  const close = buf.indexOf(quote, from);
  if (close < 0 || close >= end) return undefined;
  // A byte loop over the value: indexOf would scan the rest of the chunk when there is none, and a subarray
  // per value costs an allocation a million times over.
  for (let i = from; i < close; i++) if (buf[i] === backslash) return undefined;
  return [buf.toString('utf8', from, close), close];
};

/** The eval path last read, as bytes and text: a million rows name a handful of paths, mostly the same in a row. */
let lastPath = { bytes: Buffer.alloc(0), text: '' };

/** stringAt for the eval path, returning the previous row's string when the bytes are the same. */
const evalPathAt = (buf: Buffer, from: number, end: number): [string, number] | undefined => {
  const close = buf.indexOf(quote, from);
  if (close < 0 || close >= end) return undefined;
  const known = lastPath.bytes;
  if (close - from === known.length && tagAt(buf, from, known)) return [lastPath.text, close];
  const read = stringAt(buf, from, end);
  if (read) lastPath = { bytes: Buffer.from(buf.subarray(from, close)), text: read[0] };
  return read;
};

const outcomes: readonly Outcome[] = ['passed', 'failed', 'error', 'canceled'];
const outcomeBytes = outcomes.map((o) => Buffer.from(`${o}"`));

/** The outcome at `from` as one of the four constant strings: a million rows allocate none. */
const outcomeAt = (buf: Buffer, from: number): Outcome | undefined => {
  for (let i = 0; i < outcomes.length; i++) if (tagAt(buf, from, outcomeBytes[i] as Buffer)) return outcomes[i];
  return undefined;
};

// A byte loop: the tags are short, and Buffer.compare's native call costs more than the bytes it compares.
const tagAt = (buf: Buffer, at: number, tag: Buffer): boolean => {
  if (at < 0 || at + tag.length > buf.length) return false;
  for (let i = 0; i < tag.length; i++) if (buf[at + i] !== tag[i]) return false;
  return true;
};

/**
 * Whether the line ends as our rows end, with the artifacts field closing the object. A row torn anywhere
 * (even right after its outcome) lacks this end, and so does the start of one that an older writer ended
 * with a newline: a line is read by its head only when both ends are there.
 */
const endsAsRow = (buf: Buffer, start: number, end: number): boolean => {
  if (end - start < prefix.length + artifactsTag.length + rowEnd.length || !tagAt(buf, end - rowEnd.length, rowEnd)) {
    return false;
  }
  // Backwards over the artifacts value (a short path without escapes) to its opening quote.
  let open = end - rowEnd.length - 1;
  while (open > start && buf[open] !== quote && buf[open] !== backslash) open--;
  return buf[open] === quote && tagAt(buf, open + 1 - artifactsTag.length, artifactsTag);
};

/**
 * Reads key, outcome and fingerprint of one of our rows straight from its bytes. In strings, JSON escapes
 * every quote, so the structural markers cannot occur inside a value; anything unexpected returns undefined
 * and the caller parses the line as JSON.
 */
const fastHead = (buf: Buffer, start: number, end: number) => {
  if (!tagAt(buf, start, prefix) || !endsAsRow(buf, start, end)) return undefined;
  const evalPath = evalPathAt(buf, start + prefix.length, end);
  if (!evalPath) return undefined;
  const keyAt = buf.indexOf(afterIdentity, evalPath[1]);
  if (keyAt < 0 || keyAt >= end) return undefined;
  const key = stringAt(buf, keyAt + afterIdentity.length, end);
  if (!key || !tagAt(buf, key[1] + 1, fingerprintTag)) return undefined;
  const fingerprint = stringAt(buf, key[1] + 1 + fingerprintTag.length, end);
  if (!fingerprint || !tagAt(buf, fingerprint[1] + 1, outcomeTag)) return undefined;
  const outcome = outcomeAt(buf, fingerprint[1] + 1 + outcomeTag.length);
  if (!outcome) return undefined;
  return { key: key[0], fingerprint: fingerprint[0], outcome, evalPath: evalPath[0] };
};

/**
 * Calls `onHead` for every row of a bundle's index.jsonl, in order, reading it in chunks: a million-row
 * index is never in memory whole, and rows are parsed only when a reader asks. Returns the lines that are not
 * rows. A missing index is an empty bundle. A row is committed with its newline (one write(2)); a last line
 * without one counts only if it parses whole, since a torn write can stop anywhere.
 */
export const forEachRowHead = (dir: string, onHead: (head: RowHead) => void): SkippedLine[] => {
  const file = join(dir, indexFile);
  const skipped: SkippedLine[] = [];
  if (!existsSync(file)) return skipped;
  const fd = openSync(file, 'r');
  // Sized to the index when it is small: most bundles are, and zeroing a whole chunk for each would cost more
  // than reading them.
  let buf = Buffer.alloc(Math.max(1024, Math.min(chunkBytes, fstatSync(fd).size + 1)));
  let filled = 0;
  let base = 0; // file offset of buf[0]
  let lineNo = 0;
  let start = 0;
  let end = 0;
  let parsed: IndexRow | undefined;
  const parse = (): IndexRow | undefined => {
    if (parsed) return parsed;
    parsed = parseRow(buf.toString('utf8', start, end));
    return parsed;
  };
  // One head object for every row: a million rows must not mean a million objects for the collector.
  const head: RowHead = {
    key: '',
    outcome: 'passed',
    fingerprint: undefined,
    evalPath: undefined,
    offset: 0,
    length: 0,
    row: () => parse() as IndexRow,
  };
  const take = (from: number, to: number, unterminated: boolean): void => {
    lineNo++;
    if (to === from) return;
    start = from;
    end = to;
    parsed = undefined;
    const fast = unterminated ? undefined : fastHead(buf, start, end);
    const slow = fast ? undefined : parse();
    if (!fast && !slow) {
      skipped.push({ line: lineNo, text: buf.toString('utf8', start, Math.min(end, start + 200)) });
      return;
    }
    head.key = fast?.key ?? (slow as IndexRow).key;
    head.outcome = fast?.outcome ?? (slow as IndexRow).outcome;
    head.fingerprint = fast ? fast.fingerprint : typeof slow?.fingerprint === 'string' ? slow.fingerprint : undefined;
    head.evalPath = fast ? fast.evalPath : typeof slow?.identity?.eval === 'string' ? slow.identity.eval : undefined;
    head.offset = base + start;
    head.length = end - start;
    onHead(head);
  };
  try {
    for (;;) {
      if (filled === buf.length) {
        // A line longer than the buffer: grow it rather than split the line.
        const bigger = Buffer.alloc(buf.length * 2);
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
      }
      const n = readSync(fd, buf, filled, buf.length - filled, null);
      const filledTo = filled + n;
      let from = 0;
      for (let nl = buf.indexOf(newline, from); nl >= 0 && nl < filledTo; nl = buf.indexOf(newline, from)) {
        take(from, nl, false);
        from = nl + 1;
      }
      if (n === 0) {
        take(from, filledTo, true);
        break;
      }
      buf.copy(buf, 0, from, filledTo);
      base += from;
      filled = filledTo - from;
    }
  } finally {
    closeSync(fd);
  }
  return skipped;
};

/** Reads whole rows back by their place in index.jsonl (from RowHead.offset and length). */
export const readRowsAt = (dir: string, places: readonly { offset: number; length: number }[]): IndexRow[] => {
  const fd = openSync(join(dir, indexFile), 'r');
  try {
    return places.map(({ offset, length }) => {
      const buf = Buffer.alloc(length);
      readSync(fd, buf, 0, length, offset);
      return JSON.parse(buf.toString('utf8')) as IndexRow;
    });
  } finally {
    closeSync(fd);
  }
};

export interface IndexRead {
  rows: IndexRow[];
  skipped: SkippedLine[];
}

/** Every row, in order: for small bundles and tests; large readers fold over forEachRowHead. */
export const readIndex = (dir: string): IndexRead => {
  const rows: IndexRow[] = [];
  const skipped = forEachRowHead(dir, (head) => rows.push(head.row()));
  return { rows, skipped };
};
