import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isOneLineObject } from '../one-line-object.js';
import { type ArtifactFileHead, openRegularFile, readBytes, readTextHead } from './artifact-files.js';
import { appendLines } from './line-append.js';

/**
 * The result.json of every case that has no other artifact, one per line, appended: a case folder costs two
 * mkdirs and a file create, the largest cost of a run on a real disk. Its row's `result_at` says where its line is.
 */
export const packFile = 'results.jsonl';

/** Where a packed result.json lies in results.jsonl: its byte offset and length (without the newline). */
export type ResultAt = readonly [offset: number, bytes: number];

/** The row field naming a packed result's place; spliced in last, after `artifacts`. */
export const resultAtField = 'result_at';

/**
 * The result.json text of a case to pack: its only file, a JSON object on one line (the store's cap adds a
 * marker line to a cut one, which keeps its folder); undefined when the case needs its folder.
 */
export const packable = (files: Readonly<Record<string, string>>): string | undefined => {
  const text = files['result.json'];
  return text !== undefined && Object.keys(files).length === 1 && isOneLineObject(text) ? text : undefined;
};

/**
 * A row's text with its result's place added before its final `}`: the row is the text the store holds, and
 * parsing and stringifying it again per case would cost more than the folder this saves.
 */
export const withResultAt = (row: string, at: ResultAt): string => {
  const close = row.lastIndexOf('}');
  return `${row.slice(0, close)},"${resultAtField}":[${at[0]},${at[1]}]${row.slice(close)}`;
};

const isOffset = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/**
 * A row's packed result place; undefined when the row has none (its result.json, if any, is in its folder). A
 * value that is not two offsets is a place nothing is at: `[-1, 0]`.
 */
export const resultAtOf = (row: unknown): ResultAt | undefined => {
  if (typeof row !== 'object' || row === null || !(resultAtField in row)) return undefined;
  const at = (row as Record<string, unknown>)[resultAtField];
  return Array.isArray(at) && at.length === 2 && isOffset(at[0]) && isOffset(at[1]) ? [at[0], at[1]] : [-1, 0];
};

const newline = 0x0a;
const openBrace = 0x7b;
const closeBrace = 0x7d;

/**
 * The first `chars` characters (all without) of the packed result at `at`, reading no more of the pack than that.
 * A bundle can come from anywhere: a place outside the file, or one that is not a whole line holding a JSON object
 * (`{` at its start, `}` at its end), gives nothing, and a pack that is a link is not followed.
 */
export const readPackedResult = (bundleDir: string, at: ResultAt, chars?: number): ArtifactFileHead | undefined => {
  const [offset, bytes] = at;
  if (offset < 0 || bytes < 2) return undefined;
  const pack = openRegularFile(join(bundleDir, packFile));
  if (!pack) return undefined;
  const { fd } = pack;
  try {
    if (offset + bytes >= pack.size) return undefined;
    // The byte before the line (none at the start) and its first byte, in one read; its last byte and newline.
    const [before, first] = offset === 0 ? [newline, readBytes(fd, 1, 0)[0]] : readBytes(fd, 2, offset - 1);
    const end = readBytes(fd, 2, offset + bytes - 1);
    if (before !== newline || first !== openBrace || end[0] !== closeBrace || end[1] !== newline) return undefined;
    return { text: readTextHead(fd, offset, bytes, chars), length: bytes };
  } finally {
    closeSync(fd);
  }
};

/**
 * Appends result.json texts to a bundle's pack. Its bundle's writer is its only writer (the bundle lock), so a
 * line's offset is the file's size at open plus what this pack wrote since.
 */
export class ResultPack {
  private fd: number | undefined;
  private size = 0;

  constructor(private readonly dir: string) {}

  /**
   * Appends `texts` (single-line JSON) in one write(2) and returns each one's place. A crash tears at most lines
   * no row names yet; the next writer starts on a line of its own after them.
   */
  append(texts: readonly string[]): ResultAt[] {
    if (texts.length === 0) return [];
    const lengths = appendLines(this.open(), texts);
    const places: ResultAt[] = new Array(lengths.length);
    let at = this.size;
    for (let i = 0; i < lengths.length; i++) {
      const bytes = lengths[i] as number;
      places[i] = [at, bytes];
      at += bytes + 1;
    }
    this.size = at;
    return places;
  }

  private open(): number {
    if (this.fd !== undefined) return this.fd;
    const fd = openSync(join(this.dir, packFile), 'a+');
    this.size = fstatSync(fd).size;
    // A crash's torn last line: ended, so the next line starts after a newline as every packed line does.
    if (this.size > 0 && readBytes(fd, 1, this.size - 1)[0] !== newline) {
      writeSync(fd, '\n');
      this.size++;
    }
    this.fd = fd;
    return fd;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
