import { closeSync, openSync, readSync } from 'node:fs';

/** Read at a time: a 100,000-test JSONL file is ~63 MB, which planning need not hold as one string. */
const chunkBytes = 1 << 20;

const newline = 10;
const carriageReturn = 13;

export interface TextLine {
  line: string;
  /** 0-based. */
  index: number;
  /** Where the line starts in the file, in bytes: a plan reads it again from there (line-reader.ts). */
  offset: number;
  /** Its length in bytes, without its line end. */
  bytes: number;
}

/**
 * The lines of a UTF-8 file, as `text.split(/\r?\n/)` gives them (a `\r` before a `\n` dropped), read in
 * chunks so that only the current line and one chunk are held. Split on the newline byte, which is never part
 * of a multi-byte character, so each line's bytes (and its offset) are known.
 */
export function* textLines(file: string): Generator<TextLine> {
  const fd = openSync(file, 'r');
  try {
    let buffer = Buffer.allocUnsafe(chunkBytes);
    // Bytes at the buffer's start carried over from the last read: the beginning of an unfinished line.
    let held = 0;
    // The file offset of buffer[0].
    let base = 0;
    let index = 0;
    for (;;) {
      if (held === buffer.length) {
        // One line longer than the buffer: make room for the rest of it.
        const larger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(larger, 0, 0, held);
        buffer = larger;
      }
      const read = readSync(fd, buffer, held, buffer.length - held, null);
      const view = buffer.subarray(0, held + read);
      let start = 0;
      for (let nl = view.indexOf(newline, start); nl !== -1; nl = view.indexOf(newline, start)) {
        const end = nl > start && view[nl - 1] === carriageReturn ? nl - 1 : nl;
        yield { line: view.toString('utf8', start, end), index: index++, offset: base + start, bytes: end - start };
        start = nl + 1;
      }
      if (read === 0) {
        yield { line: view.toString('utf8', start), index, offset: base + start, bytes: view.length - start };
        return;
      }
      held = view.copy(buffer, 0, start);
      base += start;
    }
  } finally {
    closeSync(fd);
  }
}
