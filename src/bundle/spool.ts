import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Pieces are gathered to about this size before a write, so a piece per case does not cost a syscall per case.
const batchBytes = 64 * 1024;

/**
 * A part of an export document written while its rows stream past and read back once the parts before it are
 * known: a document whose header counts the rows (JUnit, the JSON and HTML summaries) is still one pass over the
 * index, holding no rows. A temporary file, removed by `remove`.
 */
export class Spool {
  // Opened at the first write that needs it: an export planned for a run that never ends leaves nothing behind.
  private file: { dir: string; fd: number } | undefined;
  private pending: string[] = [];
  private pendingLength = 0;
  private written = 0;

  write(piece: string): void {
    this.pending.push(piece);
    this.pendingLength += piece.length;
    if (this.pendingLength >= batchBytes) this.flush();
  }

  private opened(): number {
    if (!this.file) {
      const dir = mkdtempSync(join(tmpdir(), 'proctor-spool-'));
      this.file = { dir, fd: openSync(join(dir, 'part'), 'w+') };
    }
    return this.file.fd;
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const fd = this.opened();
    const bytes = Buffer.from(this.pending.join(''));
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at, this.written + at);
    this.written += bytes.length;
    this.pending = [];
    this.pendingLength = 0;
  }

  /** What was written, a chunk at a time. */
  *chunks(): Generator<Buffer> {
    // A spool that never filled a batch is still all in memory.
    if (!this.file) {
      if (this.pending.length) yield Buffer.from(this.pending.join(''));
      return;
    }
    this.flush();
    const buffer = Buffer.alloc(batchBytes * 16);
    for (let at = 0; at < this.written; ) {
      const n = readSync(this.file.fd, buffer, 0, buffer.length, at);
      if (n === 0) return;
      at += n;
      yield Buffer.from(buffer.subarray(0, n));
    }
  }

  remove(): void {
    this.pending = [];
    if (!this.file) return;
    closeSync(this.file.fd);
    rmSync(this.file.dir, { recursive: true, force: true });
    this.file = undefined;
  }
}
