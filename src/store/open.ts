import { isAbsolute, resolve } from 'node:path';
import { InputError } from '../errors.js';
import type { Store } from './store.js';

/** Opens the store a `[store] url` names: `sqlite:PATH` (relative to `root`) or `postgres://…`. */
export const openStore = async (url: string, root: string): Promise<Store> => {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    const { openSqliteStore } = await import('./sqlite.js');
    return openSqliteStore(path === ':memory:' || isAbsolute(path) ? path : resolve(root, path));
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore(url);
  }
  throw new InputError(
    `unsupported store url "${url}"`,
    undefined,
    'use sqlite:PATH (relative to the project root) or postgres://user@host:port/database',
  );
};
