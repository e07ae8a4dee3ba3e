import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { contentHash } from '../content-hash.js';
import type { ErrorRecord } from '../errors.js';

/**
 * Checks this checkout's project files against the hashes a case was submitted with, so a worker on another
 * revision fails the case instead of grading it with other agents, graders or templates. A file is hashed
 * again only when its size or mtime changed.
 */
export class ProjectFiles {
  private readonly seen = new Map<string, { stamp: string; hash: string | undefined }>();

  constructor(private readonly root: string) {}

  private hashOf(rel: string): string | undefined {
    const file = path.join(this.root, rel);
    try {
      const st = statSync(file);
      const stamp = `${st.size}:${st.mtimeMs}`;
      const known = this.seen.get(rel);
      if (known?.stamp === stamp) return known.hash;
      const hash = contentHash(readFileSync(file));
      this.seen.set(rel, { stamp, hash });
      return hash;
    } catch {
      return undefined;
    }
  }

  /** A `setup_failed` error naming the first file that differs, or undefined when all match. */
  mismatch(expected: Readonly<Record<string, string>> | undefined): ErrorRecord | undefined {
    for (const [rel, hash] of Object.entries(expected ?? {})) {
      const mine = this.hashOf(rel);
      if (mine === hash) continue;
      return {
        kind: 'setup_failed',
        message:
          `project file ${rel} ${mine === undefined ? 'is missing in' : 'differs in'} this worker's checkout ` +
          `(${this.root}) from the one the run was submitted with; check out the same revision on every worker`,
        retryable: false,
      };
    }
    return undefined;
  }
}
