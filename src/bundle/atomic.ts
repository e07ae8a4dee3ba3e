import { renameSync, writeFileSync } from 'node:fs';

let counter = 0;

/** Writes a file whole or not at all: a reader never sees a half-written artifact or summary. */
export const writeFileAtomic = (path: string, data: string | Uint8Array): void => {
  const tmp = `${path}.${process.pid}.${++counter}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
};
