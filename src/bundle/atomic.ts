import { closeSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';

let counter = 0;

/** Writes a file whole or not at all: a reader never sees a half-written artifact or summary. */
export const writeFileAtomic = (path: string, data: string | Uint8Array): void => {
  const tmp = `${path}.${process.pid}.${++counter}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
};

/** As writeFileAtomic, from pieces written as they come: a large file is never one buffer. */
export const writePiecesAtomic = (path: string, pieces: Iterable<string | Uint8Array>): void => {
  const tmp = `${path}.${process.pid}.${++counter}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    for (const piece of pieces) {
      const bytes = typeof piece === 'string' ? Buffer.from(piece) : piece;
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    }
  } catch (error) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(tmp, path);
};
