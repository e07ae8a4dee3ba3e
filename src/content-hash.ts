import { createHash } from 'node:crypto';

/** A file's or value's short content hash: what fingerprints fold in, and what a worker checks files against. */
export const contentHash = (data: string | Buffer): string =>
  createHash('sha256').update(data).digest('hex').slice(0, 20);
