import { closeSync, fstatSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { InputError } from '../errors.js';

/** Read ahead at a time: a plan reads its tests back in file order, so most reads find their line here. */
const windowBytes = 1 << 16;

/**
 * Reads lines of a file back by their byte offset and length (as textLines gave them), a window at a time. The
 * file must not change meanwhile: a plan read its tests from it and keyed and fingerprinted its cases by what they
 * said. A change of its size or modification time is refused as an InputError.
 */
export class LineReader {
  private window = Buffer.alloc(0);
  private start = 0;
  private readonly size: number;
  private readonly mtimeMs: number;

  /** Call before the file's first reading: a change after it is seen. */
  constructor(
    private readonly file: string,
    private readonly display: string,
  ) {
    const stat = statSync(file);
    this.size = stat.size;
    this.mtimeMs = stat.mtimeMs;
  }

  read(offset: number, bytes: number): string {
    if (offset < this.start || offset + bytes > this.start + this.window.length) this.fill(offset, bytes);
    return this.window.toString('utf8', offset - this.start, offset - this.start + bytes);
  }

  private fill(offset: number, bytes: number): void {
    const fd = openSync(this.file, 'r');
    try {
      this.check(fstatSync(fd));
      const window = Buffer.allocUnsafe(Math.max(windowBytes, bytes));
      const read = readSync(fd, window, 0, window.length, offset);
      this.check(fstatSync(fd));
      this.window = window.subarray(0, read);
      this.start = offset;
    } finally {
      closeSync(fd);
    }
  }

  private check(stat: Stats): void {
    if (stat.size !== this.size || stat.mtimeMs !== this.mtimeMs)
      throw new InputError(
        `${this.display} changed while this command was running the tests it read from it`,
        { file: this.display },
        'leave a tests file as it is until the run that reads it ends; run again to use the new tests',
      );
  }
}
