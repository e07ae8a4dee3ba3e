import { statSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { workerThreads } from '../node-modules.js';

export interface WalCheckpointerOptions {
  /** The WAL file size at which a thread starts checkpointing it. */
  fromBytes: number;
  /** How often that thread checkpoints. */
  everyMs: number;
  /** How often the WAL's size is looked at until then. */
  watchMs: number;
}

/**
 * A bit under half the WAL at which the writing connection checkpoints itself (its wal_autocheckpoint, sqlite.ts):
 * a run that would reach that point (~4,000 cases or more) has its thread by then; a shorter one starts none. Every
 * second: each checkpoint copies the pages changed since the one before, so the more often, the more copies of a
 * page written to again and again (every 500 ms: ~2-3% more CPU in a 20,000-case run; every 2 s: none, but the
 * writing connection's own checkpoint has up to 2 s of pages left to copy, ~150 ms instead of ~90).
 */
export const defaultCheckpointing: WalCheckpointerOptions = {
  fromBytes: 32 * 1024 * 1024,
  everyMs: 1000,
  watchMs: 1000,
};

// The thread: its own connection to the file, checkpointing passively (never waiting on a lock, never holding up a
// writer) until told to close. CommonJS, evaluated as it is: it runs from the bundle and from the TypeScript sources.
const threadSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.addon);
const db = new Database(workerData.file, { fileMustExist: true });
const checkpoint = () => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
};
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
checkpoint();
`;

/**
 * Checkpoints a SQLite store's WAL on a thread of its own once the WAL grows large. A checkpoint copies the WAL's
 * pages into the database file and waits for the disk to take them: done by the connection that commits, as SQLite
 * does by itself, a 5,000-case run's one checkpoint held its thread ~325 ms (every case in flight waited, and took
 * 400 ms instead of 57), and a 100,000-case run has ~20. Done here meanwhile, it leaves the writing connection's own
 * checkpoints (still due at its wal_autocheckpoint, which is when SQLite starts the WAL over) little to copy.
 * A short run's WAL never reaches `fromBytes`, and it pays for no thread (~80 ms of CPU to start).
 */
export class WalCheckpointer {
  private readonly watch: NodeJS.Timeout;
  private thread: { worker: Worker; exited: Promise<void> } | undefined;

  constructor(
    private readonly file: string,
    /** better-sqlite3's entry, which the thread loads. */
    private readonly addon: string,
    private readonly options: WalCheckpointerOptions,
  ) {
    this.watch = setInterval(() => this.look(), options.watchMs);
    // Never what keeps a process up.
    this.watch.unref();
  }

  private look(): void {
    let bytes = 0;
    try {
      bytes = statSync(`${this.file}-wal`).size;
    } catch {
      return;
    }
    if (bytes < this.options.fromBytes) return;
    clearInterval(this.watch);
    // A thread that cannot start, or fails, leaves checkpoints to the writing connection, as without one; unheard,
    // its error would end the process.
    let worker: Worker;
    try {
      worker = new (workerThreads().Worker)(threadSource, {
        eval: true,
        workerData: { addon: this.addon, file: this.file, everyMs: this.options.everyMs },
      });
    } catch {
      return;
    }
    worker.unref();
    worker.on('error', () => {});
    this.thread = { worker, exited: new Promise((resolve) => worker.once('exit', () => resolve())) };
  }

  /**
   * Stops watching, and closes the thread's connection. Call it once the store's own connection is closed: the
   * thread's is then the last, and its close checkpoints what is left and removes the WAL.
   */
  async close(): Promise<void> {
    clearInterval(this.watch);
    if (!this.thread) return;
    // Unreferenced, the thread would let the process end (with the caller's work left undone) before it closes.
    this.thread.worker.ref();
    this.thread.worker.postMessage('close');
    await this.thread.exited;
  }
}
