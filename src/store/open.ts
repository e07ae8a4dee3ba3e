import { InputError, type SourcePosition } from '../errors.js';
import { StoreOpenError } from './open-error.js';
import type { Store } from './store.js';

/** `[store]` of the project config: the url, and where proctor.toml says it, so a bad url is reported there. */
export interface StoreConfig {
  url: string;
  where?: SourcePosition;
}

const openUrl = async (url: string): Promise<Store> => {
  if (url.startsWith('sqlite:')) {
    const { openSqliteStore } = await import('./sqlite.js');
    return openSqliteStore(url.slice('sqlite:'.length));
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore(url);
  }
  throw new StoreOpenError(
    'unreachable',
    `unsupported store url "${url.split(':')[0]}:…"`,
    'use sqlite:PATH (relative to the project root) or postgres://user@host:port/database',
  );
};

/**
 * Opens the store a `[store] url` names: `sqlite:PATH` or `postgres://…`. The project config has already made
 * a relative SQLite path absolute against the project root (plan/config.ts).
 */
export const openStore = async (config: StoreConfig): Promise<Store> => {
  try {
    return await openUrl(config.url);
  } catch (error) {
    if (error instanceof StoreOpenError) throw new InputError(error.message, config.where, error.hint);
    throw error;
  }
};
