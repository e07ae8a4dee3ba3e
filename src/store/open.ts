import { InputError } from '../errors.js';
import type { Store } from './store.js';

/**
 * Opens the store a `[store] url` names: `sqlite:PATH` or `postgres://…`. The project config has already made
 * a relative SQLite path absolute against the project root (plan/config.ts).
 */
export const openStore = async (url: string): Promise<Store> => {
  if (url.startsWith('sqlite:')) {
    const { openSqliteStore } = await import('./sqlite.js');
    return openSqliteStore(url.slice('sqlite:'.length));
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
