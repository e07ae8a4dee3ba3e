import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { type CaseResult, toIndexRow } from './row.js';

export const indexFile = 'index.jsonl';
export const summaryFile = 'summary.json';

/** The artifact folder of one case execution, relative to the bundle. */
export const artifactDir = (key: string, attempt: number): string => `cases/${key}/${attempt}`;

/**
 * Appends to one results bundle. Each case's artifacts land first (atomically), then its row, in one
 * write(2) on an O_APPEND descriptor: a crash leaves at most a torn last line, never a rewritten one.
 */
export class BundleWriter {
  private fd: number | undefined;

  constructor(readonly dir: string) {}

  /** Writes the artifacts of a case; `files` maps names to contents. */
  writeArtifacts(relDir: string, files: Readonly<Record<string, string>>): void {
    const dir = join(this.dir, relDir);
    mkdirSync(dir, { recursive: true });
    for (const [name, content] of Object.entries(files)) writeFileAtomic(join(dir, name), content);
  }

  appendRow(result: CaseResult): void {
    if (this.fd === undefined) {
      mkdirSync(this.dir, { recursive: true });
      this.fd = openSync(join(this.dir, indexFile), 'a');
    }
    writeSync(this.fd, `${JSON.stringify(toIndexRow(result))}\n`);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
