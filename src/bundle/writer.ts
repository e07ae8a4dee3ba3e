import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
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
  private created = false;

  constructor(readonly dir: string) {}

  /** Writes the artifacts of a case under `cases/<key>/<attempt>/`; `files` maps names to contents. */
  writeArtifacts(key: string, attempt: number, files: Readonly<Record<string, string>>): void {
    this.ensureDir();
    // One level at a time, from the known `cases/`: a recursive mkdir probes every parent first, and on a
    // busy disk each probe is a slow metadata call.
    const keyDir = join(this.dir, 'cases', key);
    const dir = join(keyDir, String(attempt));
    for (const d of [keyDir, dir]) {
      try {
        mkdirSync(d);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    for (const [name, content] of Object.entries(files)) writeFileAtomic(join(dir, name), content);
  }

  private ensureDir(): void {
    if (this.created) return;
    mkdirSync(join(this.dir, 'cases'), { recursive: true });
    this.created = true;
  }

  appendRow(result: CaseResult): void {
    if (this.fd === undefined) {
      this.ensureDir();
      this.fd = openSync(join(this.dir, indexFile), 'a+');
      this.endTornLine(this.fd);
    }
    writeSync(this.fd, `${JSON.stringify(toIndexRow(result))}\n`);
  }

  /** A crash can leave a last line without its newline; the next row must not be glued onto it. */
  private endTornLine(fd: number): void {
    const size = fstatSync(fd).size;
    if (size === 0) return;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] !== 0x0a) writeSync(fd, '\n');
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
