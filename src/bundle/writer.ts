import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { appendLines } from './line-append.js';
import { packable, type ResultAt, ResultPack, withResultAt } from './result-pack.js';
import { parseRow } from './row.js';

export const indexFile = 'index.jsonl';
export const summaryFile = 'summary.json';

/** The artifact folder of one case execution, relative to the bundle. */
export const artifactDir = (key: string, attempt: number): string => `cases/${key}/${attempt}`;

/** How far back from the end the writer reads at a time, looking for the last newline. */
const tailChunkBytes = 64 * 1024;

/**
 * Appends to one results bundle. Each case's result lands first (packed, or in its folder), then its row with
 * its newline, in one write(2) on an O_APPEND descriptor: a crash leaves at most a torn last line, never a
 * rewritten one, and never a row whose result is missing. The command writing a bundle holds its lock (lock.ts),
 * so this is its only writer.
 */
export class BundleWriter {
  private fd: number | undefined;
  private created = false;
  private casesCreated = false;
  private readonly pack: ResultPack;
  /** The cases written since the last flush, in order: each one's row and, when packed, its result.json text. */
  private pending: { row: string; packed?: string }[] = [];

  constructor(readonly dir: string) {
    this.pack = new ResultPack(dir);
  }

  /**
   * Writes one case execution: a case whose only file is a one-line result.json is packed (results.jsonl, its row
   * gets `result_at`), any other gets its folder (writeArtifacts). Its row (the store's text) is appended by the
   * next `flush`, after the packed results before it: a page of cases costs two write(2)s, not a folder each.
   */
  writeCase(key: string, attempt: number, files: Readonly<Record<string, string>>, row: string): void {
    const packed = packable(files);
    if (packed === undefined) this.writeArtifacts(key, attempt, files);
    this.pending.push(packed === undefined ? { row } : { row, packed });
  }

  /**
   * Appends the packed results of the cases written since the last flush in one write, then their rows in one;
   * returns the rows as appended (a packed result's with its place).
   */
  flush(): string[] {
    const cases = this.pending;
    this.pending = [];
    if (cases.length === 0) return [];
    this.ensureDir();
    const places = this.pack.append(cases.flatMap((c) => (c.packed === undefined ? [] : [c.packed])));
    let next = 0;
    const lines = cases.map((c) => (c.packed === undefined ? c.row : withResultAt(c.row, places[next++] as ResultAt)));
    this.appendLines(lines);
    return lines;
  }

  /**
   * Writes the artifacts of a case under `cases/<key>/<attempt>/`; `files` maps names to contents. In place, not
   * through a temporary file and a rename: readers find artifacts by their row, which is appended only after
   * they are written, and an execution's folder is its own (`attempt` counts the key's rows). A crash tears at
   * most files no row names yet, and whatever writes that result again (the materialiser from the store, or the
   * next execution of its key) truncates them.
   */
  writeArtifacts(key: string, attempt: number, files: Readonly<Record<string, string>>): void {
    this.ensureDir();
    // `cases/` only when a case has a folder: a bundle of packed results has none.
    if (!this.casesCreated) {
      mkdirSync(`${this.dir}/cases`, { recursive: true });
      this.casesCreated = true;
    }
    // One level at a time, from the known `cases/`: a recursive mkdir probes every parent first, and on a
    // busy disk each probe is a slow metadata call. Joined by hand: a key is hex and a name one component, so
    // path.join's normalising (~2.7 KB of garbage per case for its three calls) has nothing to do.
    const keyDir = `${this.dir}/cases/${key}`;
    const dir = `${keyDir}/${attempt}`;
    for (const d of [keyDir, dir]) {
      try {
        mkdirSync(d);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    for (const [name, content] of Object.entries(files)) writeFileSync(`${dir}/${name}`, content);
  }

  private ensureDir(): void {
    if (this.created) return;
    mkdirSync(this.dir, { recursive: true });
    this.created = true;
  }

  /** Opens index.jsonl for appending (created empty if missing); appendLines opens it on first use. */
  open(): void {
    if (this.fd !== undefined) return;
    this.ensureDir();
    this.fd = openSync(join(this.dir, indexFile), 'a+');
    this.settleTail(this.fd);
  }

  /**
   * Appends rows whose results are written, each as its JSON text on one line (as the store holds it), in one
   * write(2): a crash tears at most the last of them.
   */
  appendLines(lines: readonly string[]): void {
    if (lines.length === 0) return;
    this.open();
    appendLines(this.fd as number, lines);
  }

  /**
   * A crash can leave a last line without its newline. Torn, it was never a committed row: it is cut off, so
   * the case counts as not run (resume runs it again) and no reader meets a torn line in the middle. A whole
   * row that only lacks its newline is kept and ended.
   */
  private settleTail(fd: number): void {
    const size = fstatSync(fd).size;
    let lineStart = size;
    const chunk = Buffer.alloc(Math.min(tailChunkBytes, size));
    while (lineStart > 0) {
      const from = Math.max(0, lineStart - chunk.length);
      const n = readSync(fd, chunk, 0, lineStart - from, from);
      const nl = chunk.lastIndexOf(0x0a, n - 1);
      if (nl >= 0) {
        lineStart = from + nl + 1;
        break;
      }
      lineStart = from;
    }
    if (lineStart === size) return;
    const tail = Buffer.alloc(size - lineStart);
    readSync(fd, tail, 0, tail.length, lineStart);
    if (parseRow(tail.toString('utf8'))) writeSync(fd, '\n');
    else ftruncateSync(fd, lineStart);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.pack.close();
  }
}
