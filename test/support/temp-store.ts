import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';

/** A real SQLite store in a throwaway directory; `open()` adds another connection to the same file. */
export interface TempStore {
  dir: string;
  file: string;
  store: Store;
  open(): Promise<Store>;
  /** Closes every connection opened here and removes the directory. */
  remove(): Promise<void>;
}

export const openTempStore = async (): Promise<TempStore> => {
  const dir = mkdtempSync(path.join(tmpdir(), 'proctor-store-'));
  const file = path.join(dir, 'proctor.db');
  const opened: Store[] = [];
  const open = async (): Promise<Store> => {
    const store = await openSqliteStore(file);
    opened.push(store);
    return store;
  };
  return {
    dir,
    file,
    store: await open(),
    open,
    remove: async () => {
      await Promise.all(opened.map((s) => s.close().catch(() => {})));
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
