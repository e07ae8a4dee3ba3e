import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Outcome } from '../records.js';
import { resultAtField } from './result-pack.js';
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
  readonly key: string;
  outcome: Outcome;
  readonly fingerprint: string | undefined;
  /** `identity.eval`, when the row has an identity. */
  evalPath: string | undefined;
  /** Where the row's line sits in index.jsonl, to read it again later. */
  offset: number;
  length: number;
  /**
   * Where key and fingerprint lie in `bytes`, for a reader that compares bytes instead of making two strings a
   * row; -1 when the row was parsed (then `key` and `fingerprint` are all there is).
   */
  readonly bytes: Buffer;
  readonly keyFrom: number;
  readonly keyTo: number;
  readonly fingerprintFrom: number;
  readonly fingerprintTo: number;
  /** Parses the whole row; valid only during the callback. */
  row(): IndexRow;
}

const chunkBytes = 8 * 1024 * 1024;
const newline = 0x0a;
const quote = 0x22;
const backslash = 0x5c;
const closeBrace = 0x7d;

// Rows this version writes start so, list key, fingerprint and outcome right after the identity, and end
// with the artifacts folder, then a packed result's place when the case has one (result-pack.ts).
const prefix = Buffer.from(`{"schema":"${rowSchema}","identity":{"eval":"`);
const afterIdentity = Buffer.from('},"key":"');
const fingerprintTag = Buffer.from(',"fingerprint":"');
const outcomeTag = Buffer.from(',"outcome":"');
const artifactsTag = Buffer.from(',"artifacts":"');
const resultAtTag = Buffer.from(`,"${resultAtField}":[`);
const closeBracket = 0x5d;
const comma = 0x2c;

/**
 * The closing quote of the string value starting at `from`, or -1 if it holds an escape or does not close before
 * `end`. A byte loop: the values are short, and Buffer.indexOf's native call costs more than they do.
 */
const stringEnd = (buf: Buffer, from: number, end: number): number => {
  for (let i = from; i < end; i++) {
    const byte = buf[i];
    if (byte === quote) return i;
    if (byte === backslash) return -1;
  }
  return -1;
};

// A byte loop: the tags are short, and Buffer.compare's native call costs more than the bytes it compares.
const tagAt = (buf: Buffer, at: number, tag: Buffer): boolean => {
  if (at < 0 || at + tag.length > buf.length) return false;
  for (let i = 0; i < tag.length; i++) if (buf[at + i] !== tag[i]) return false;
  return true;
};

/** The eval path last read, as bytes and text: a million rows name a handful of paths, mostly the same in a row. */
let lastPath = { bytes: Buffer.alloc(0), text: '' };

/** The eval path from `from` to its quote `close`, as the previous row's string when the bytes are the same. */
const evalPathAt = (buf: Buffer, from: number, close: number): string => {
  const known = lastPath.bytes;
  if (close - from !== known.length || !tagAt(buf, from, known)) {
    lastPath = { bytes: Buffer.from(buf.subarray(from, close)), text: buf.toString('utf8', from, close) };
  }
  return lastPath.text;
};

const outcomes: readonly Outcome[] = ['passed', 'failed', 'error', 'canceled'];
const outcomeBytes = outcomes.map((o) => Buffer.from(`${o}"`));

/** The outcome at `from` as one of the four constant strings: a million rows allocate none. */
const outcomeAt = (buf: Buffer, from: number): Outcome | undefined => {
  for (let i = 0; i < outcomes.length; i++) if (tagAt(buf, from, outcomeBytes[i] as Buffer)) return outcomes[i];
  return undefined;
};

/** Backwards from `at` over a run of digits: the index of the byte before them. */
const beforeDigits = (buf: Buffer, at: number, start: number): number => {
  let i = at;
  while (i > start && (buf[i] as number) >= 0x30 && (buf[i] as number) <= 0x39) i--;
  return i;
};

/**
 * Where the fields of the row on `start`..`end` end: its closing brace, or the comma of a packed result's place
 * that follows them (`,"result_at":[N,N]}`).
 */
const fieldsEnd = (buf: Buffer, start: number, end: number): number => {
  const brace = end - 1;
  if (buf[brace - 1] !== closeBracket) return brace;
  const between = beforeDigits(buf, brace - 2, start);
  if (between === brace - 2 || buf[between] !== comma) return brace;
  const open = beforeDigits(buf, between - 1, start);
  if (open === between - 1) return brace;
  const field = open + 1 - resultAtTag.length;
  return tagAt(buf, field, resultAtTag) ? field : brace;
};

/**
 * Whether the line ends as our rows end, with the artifacts field closing the object (or followed only by a
 * packed result's place). A row torn anywhere (even right after its outcome) lacks this end, and so does the
 * start of one that an older writer ended with a newline: a line is read by its head only when both ends are there.
 */
const endsAsRow = (buf: Buffer, start: number, end: number): boolean => {
  if (end - start < prefix.length + artifactsTag.length + 2 /* `"}` */ || buf[end - 1] !== closeBrace) return false;
  const close = fieldsEnd(buf, start, end) - 1;
  if (buf[close] !== quote) return false;
  // Backwards over the artifacts value (a short path without escapes) to its opening quote.
  let open = close - 1;
  while (open > start && buf[open] !== quote && buf[open] !== backslash) open--;
  return buf[open] === quote && tagAt(buf, open + 1 - artifactsTag.length, artifactsTag);
};

/** The head of the line being read: its fields straight from the bytes, or from the parsed row. */
class Head implements RowHead {
  outcome: Outcome = 'passed';
  evalPath: string | undefined;
  offset = 0;
  length = 0;
  bytes: Buffer;
  keyFrom = -1;
  keyTo = -1;
  fingerprintFrom = -1;
  fingerprintTo = -1;
  /** The line's place in `bytes`. */
  start = 0;
  end = 0;
  private parsed: IndexRow | undefined;

  constructor(buf: Buffer) {
    this.bytes = buf;
  }

  get key(): string {
    return this.keyFrom < 0 ? this.row().key : this.bytes.toString('utf8', this.keyFrom, this.keyTo);
  }

  get fingerprint(): string | undefined {
    if (this.fingerprintFrom >= 0) return this.bytes.toString('utf8', this.fingerprintFrom, this.fingerprintTo);
    const fingerprint = this.keyFrom < 0 ? this.row().fingerprint : undefined;
    return typeof fingerprint === 'string' ? fingerprint : undefined;
  }

  row(): IndexRow {
    this.parsed ??= parseRow(this.bytes.toString('utf8', this.start, this.end));
    return this.parsed as IndexRow;
  }

  /**
   * Reads the line from `start` to `end`: true when it is a row. One of our rows is read from its bytes (in
   * strings, JSON escapes every quote, so the structural markers cannot occur inside a value); anything
   * unexpected, or a last line without its newline, is parsed as JSON.
   */
  read(start: number, end: number, unterminated: boolean): boolean {
    this.start = start;
    this.end = end;
    this.parsed = undefined;
    if (!unterminated && this.readBytes()) return true;
    const row = parseRow(this.bytes.toString('utf8', start, end));
    if (!row) return false;
    this.parsed = row;
    this.keyFrom = this.keyTo = this.fingerprintFrom = this.fingerprintTo = -1;
    this.outcome = row.outcome;
    this.evalPath = typeof row.identity?.eval === 'string' ? row.identity.eval : undefined;
    return true;
  }

  private readBytes(): boolean {
    const { bytes: buf, start, end } = this;
    if (!tagAt(buf, start, prefix) || !endsAsRow(buf, start, end)) return false;
    const pathFrom = start + prefix.length;
    const pathTo = stringEnd(buf, pathFrom, end);
    if (pathTo < 0) return false;
    let keyFrom = -1;
    for (let i = pathTo + 1; i < end; i++) {
      if (buf[i] === closeBrace && tagAt(buf, i, afterIdentity)) {
        keyFrom = i + afterIdentity.length;
        break;
      }
    }
    if (keyFrom < 0) return false;
    const keyTo = stringEnd(buf, keyFrom, end);
    if (keyTo < 0 || !tagAt(buf, keyTo + 1, fingerprintTag)) return false;
    const fingerprintFrom = keyTo + 1 + fingerprintTag.length;
    const fingerprintTo = stringEnd(buf, fingerprintFrom, end);
    if (fingerprintTo < 0 || !tagAt(buf, fingerprintTo + 1, outcomeTag)) return false;
    const outcome = outcomeAt(buf, fingerprintTo + 1 + outcomeTag.length);
    if (!outcome) return false;
    this.evalPath = evalPathAt(buf, pathFrom, pathTo);
    this.keyFrom = keyFrom;
    this.keyTo = keyTo;
    this.fingerprintFrom = fingerprintFrom;
    this.fingerprintTo = fingerprintTo;
    this.outcome = outcome;
    return true;
  }
}

/**
 * Calls `onHead` for every row of a bundle's index.jsonl, in order, reading it in chunks: a million-row index is
 * never in memory whole, and rows are parsed only when a reader asks. Returns the lines that are not rows. A
 * missing index is an empty bundle. A row is committed with its newline (one write(2)); a last line without one
 * counts only if it parses whole, since a torn write can stop anywhere.
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
  // One head object for every row: a million rows must not mean a million objects for the collector.
  const head = new Head(buf);
  const take = (start: number, to: number, unterminated: boolean): void => {
    lineNo++;
    if (to === start) return;
    if (!head.read(start, to, unterminated)) {
      skipped.push({ line: lineNo, text: buf.toString('utf8', start, Math.min(to, start + 200)) });
      return;
    }
    head.offset = base + start;
    head.length = to - start;
    onHead(head);
  };
  try {
    for (;;) {
      if (filled === buf.length) {
        // A line longer than the buffer: grow it rather than split the line.
        const bigger = Buffer.alloc(buf.length * 2);
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
        head.bytes = buf;
      }
      const n = readSync(fd, buf, filled, buf.length - filled, base + filled);
      const filledTo = filled + n;
      let start = 0;
      for (let nl = buf.indexOf(newline, start); nl >= 0 && nl < filledTo; nl = buf.indexOf(newline, start)) {
        take(start, nl, false);
        start = nl + 1;
      }
      if (n === 0) {
        take(start, filledTo, true);
        break;
      }
      buf.copy(buf, 0, start, filledTo);
      base += start;
      filled = filledTo - start;
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
      // Read as a row before (a RowHead's place), so parsed as one again.
      return parseRow(buf.toString('utf8')) as IndexRow;
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
