import { writeSync } from 'node:fs';

const newline = 0x0a;
/** The most a scratch buffer keeps between appends: a flush of a page of ordinary rows needs well under 1 MB. */
const keptBytes = 4 * 1024 * 1024;
let scratch: Buffer | undefined;

/**
 * Appends `texts` to `fd`, each on a line of its own, in one write(2), and returns each line's length in bytes
 * (without its newline). The lines are encoded into one buffer kept from append to append: joined into one string
 * and encoded whole, a page of lines made two transient copies of a few hundred KB per flush (the string flattened,
 * then its bytes), fresh memory the kernel zero-filled page by page each time (~1,900 page faults in a 5,000-case
 * run, ~12 µs each on a VM). Written lines stay whole: a crash tears at most the last.
 */
export const appendLines = (fd: number, texts: readonly string[]): number[] => {
  // UTF-8 takes at most 3 bytes per UTF-16 unit (a surrogate pair's 4 bytes are two units); lines too long to
  // keep a buffer for are measured exactly instead, so a huge one is not given three times its size.
  let most = 0;
  for (const text of texts) most += text.length * 3 + 1;
  if (most > keptBytes) {
    most = 0;
    for (const text of texts) most += Buffer.byteLength(text) + 1;
  }
  const buffer = scratch !== undefined && scratch.length >= most ? scratch : Buffer.allocUnsafeSlow(most);
  if (buffer.length <= keptBytes) scratch = buffer;
  const lengths: number[] = new Array(texts.length);
  let end = 0;
  for (let i = 0; i < texts.length; i++) {
    const bytes = buffer.write(texts[i] as string, end);
    buffer[end + bytes] = newline;
    lengths[i] = bytes;
    end += bytes + 1;
  }
  for (let done = 0; done < end; ) done += writeSync(fd, buffer, done, end - done);
  return lengths;
};
