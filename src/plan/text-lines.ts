import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** Read at a time: a 100,000-test JSONL file is ~63 MB, which planning need not hold as one string. */
const chunkBytes = 1 << 20;

/**
 * The lines of a UTF-8 file, as `text.split(/\r?\n/)` gives them (a `\r` before a `\n` dropped), read in
 * chunks so that only the current line and one chunk are held. `index` is 0-based.
 */
export function* textLines(file: string): Generator<{ line: string; index: number }> {
  const fd = openSync(file, 'r');
  try {
    const decoder = new StringDecoder('utf8');
    const buffer = Buffer.allocUnsafe(chunkBytes);
    let rest = '';
    let index = 0;
    for (;;) {
      const read = readSync(fd, buffer, 0, chunkBytes, null);
      const text = read > 0 ? rest + decoder.write(buffer.subarray(0, read)) : rest + decoder.end();
      let start = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
        const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
        yield { line: text.slice(start, end), index: index++ };
        start = nl + 1;
      }
      rest = text.slice(start);
      if (read === 0) break;
    }
    yield { line: rest, index };
  } finally {
    closeSync(fd);
  }
}
