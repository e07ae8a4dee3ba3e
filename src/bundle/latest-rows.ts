import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { MessagePort } from 'node:worker_threads';
import { workerThreads } from '../node-modules.js';
import type { Outcome } from '../records.js';
import { KeyTable } from './key-table.js';
import { forEachRowHead, type RowHead, readRowsAt, type SkippedLine } from './reader.js';
import type { IndexRow } from './row.js';
import { indexFile } from './writer.js';

/** How many rows are parsed at once: enough to amortise the reads, few enough to stay small. */
const batchSize = 4096;

/** A key's latest row, known by its place in index.jsonl and what its head says, without parsing it. */
export interface LatestEntry {
  outcome: Outcome;
  fingerprint: string | undefined;
  /** The latest row's `identity.eval`, when it has an identity. */
  evalPath: string | undefined;
  /** How many rows the key has. */
  rows: number;
  /** The latest row's place in index.jsonl, to parse it when a reader needs more than its head. */
  offset: number;
  length: number;
}

/** The latest row per key of a bundle: the one reading that summaries, exports, comparisons and resume share. */
export interface LatestIndex {
  dir: string;
  /** By key, in the order keys first appear. */
  latest: Map<string, LatestEntry>;
  /** Some key's rows disagree on its fingerprint: what decides its result changed between runs. */
  drifted: boolean;
  /** Some key's rows disagree on their eval path (or on having one): its rows are not all one case. */
  pathsDiffer: boolean;
  /** Lines that are not complete rows (a torn write): never counted, reported once by the caller. */
  skipped: SkippedLine[];
}

/** Whether the bytes from `from` to `to` spell `text`, without making a string of them unless they may not. */
const spells = (buf: Buffer, from: number, to: number, text: string): boolean => {
  if (to - from === text.length) {
    let i = 0;
    while (i < text.length && text.charCodeAt(i) < 0x80 && text.charCodeAt(i) === buf[from + i]) i++;
    if (i === text.length) return true;
  }
  return buf.toString('utf8', from, to) === text;
};

/** Whether the head's fingerprint is `fingerprint`: compared in its bytes when the head was read from them. */
const sameFingerprint = (head: RowHead, fingerprint: string | undefined): boolean =>
  head.fingerprintFrom < 0 || fingerprint === undefined
    ? head.fingerprint === fingerprint
    : spells(head.bytes, head.fingerprintFrom, head.fingerprintTo, fingerprint);

/**
 * One streaming pass over a bundle's index that keeps, per key, the place of its latest row: memory grows with
 * the bundle's cases, not with how many times they ran, and no row is parsed unless `keyOf` asks for it.
 * `keyOf` names the key a row counts for (default: its own, looked up by its bytes); undefined leaves the row
 * out.
 */
export const readLatest = (dir: string, keyOf?: (head: RowHead) => string | undefined): LatestIndex => {
  const keys = new KeyTable();
  const entries: LatestEntry[] = [];
  let drifted = false;
  let pathsDiffer = false;
  const skipped = forEachRowHead(dir, (head) => {
    let id: number;
    if (keyOf) {
      const key = keyOf(head);
      if (key === undefined) return;
      id = keys.idOfText(key);
    } else {
      id = head.keyFrom < 0 ? keys.idOfText(head.key) : keys.idOf(head.bytes, head.keyFrom, head.keyTo);
    }
    const seen = entries[id];
    if (!seen) {
      entries.push({
        outcome: head.outcome,
        fingerprint: head.fingerprint,
        evalPath: head.evalPath,
        rows: 1,
        offset: head.offset,
        length: head.length,
      });
      return;
    }
    // Updated in place: most keys appear many times, and each row need not leave an object behind. The
    // fingerprint is made a string only when it changed.
    if (!sameFingerprint(head, seen.fingerprint)) {
      drifted = true;
      seen.fingerprint = head.fingerprint;
    }
    if (head.evalPath !== seen.evalPath) {
      pathsDiffer = true;
      seen.evalPath = head.evalPath;
    }
    seen.outcome = head.outcome;
    seen.rows++;
    seen.offset = head.offset;
    seen.length = head.length;
  });
  const latest = new Map<string, LatestEntry>();
  for (let id = 0; id < entries.length; id++) latest.set(keys.keyOf(id), entries[id] as LatestEntry);
  return { dir, latest, drifted, pathsDiffer, skipped };
};

/** Parses the rows of `entries` a batch at a time, in the order they were written. */
export function* rowsOf(dir: string, entries: Iterable<LatestEntry>): Generator<IndexRow> {
  const ordered = [...entries].sort((a, b) => a.offset - b.offset);
  for (let i = 0; i < ordered.length; i += batchSize) yield* readRowsAt(dir, ordered.slice(i, i + batchSize));
}

export interface LatestRows {
  /** The latest row of each key, in the order those rows were written; read lazily, a batch at a time. */
  rows: Iterable<IndexRow>;
  /** Lines of index.jsonl that are not complete rows (a torn write). */
  skippedLines: number;
}

/** The latest rows for an exporter or a comparison, in bounded memory: parsed only as they are iterated. */
export const latestRows = (dir: string): LatestRows => {
  const index = readLatest(dir);
  return { rows: rowsOf(dir, index.latest.values()), skippedLines: index.skipped.length };
};

/** The latest index as arrays, which cross to another thread at a fraction of the cost of 100,000 objects. */
interface PackedLatest {
  keys: string[];
  fingerprints: (string | undefined)[];
  evalPaths: (string | undefined)[];
  outcomes: Outcome[];
  rows: Int32Array;
  offsets: Float64Array;
  lengths: Int32Array;
  drifted: boolean;
  pathsDiffer: boolean;
  skipped: SkippedLine[];
}

const pack = (index: LatestIndex): PackedLatest => {
  const count = index.latest.size;
  const packed: PackedLatest = {
    keys: [...index.latest.keys()],
    fingerprints: [],
    evalPaths: [],
    outcomes: [],
    rows: new Int32Array(count),
    offsets: new Float64Array(count),
    lengths: new Int32Array(count),
    drifted: index.drifted,
    pathsDiffer: index.pathsDiffer,
    skipped: index.skipped,
  };
  let i = 0;
  for (const entry of index.latest.values()) {
    packed.fingerprints.push(entry.fingerprint);
    packed.evalPaths.push(entry.evalPath);
    packed.outcomes.push(entry.outcome);
    packed.rows[i] = entry.rows;
    packed.offsets[i] = entry.offset;
    packed.lengths[i++] = entry.length;
  }
  return packed;
};

const unpack = (dir: string, packed: PackedLatest): LatestIndex => {
  const latest = new Map<string, LatestEntry>();
  packed.keys.forEach((key, i) => {
    latest.set(key, {
      outcome: packed.outcomes[i] as Outcome,
      fingerprint: packed.fingerprints[i],
      evalPath: packed.evalPaths[i],
      rows: packed.rows[i] as number,
      offset: packed.offsets[i] as number,
      length: packed.lengths[i] as number,
    });
  });
  const { drifted, pathsDiffer, skipped } = packed;
  return { dir, latest, drifted, pathsDiffer, skipped };
};

/** Names the job of a worker this module starts: loading the module anywhere else does nothing. */
const workerRole = 'proctor:read-latest';

interface ReadJob {
  role: typeof workerRole;
  dir: string;
  /** Where the worker answers: the index packed, or null when it could not read it. */
  port: MessagePort;
  /** Set to 1 once the answer is on the port: the planning thread waits on it, as it cannot take events. */
  done: Int32Array;
}

// The worker's side: this module is what its entry (latest-rows-worker.ts) loads, and it reads the index as the
// calling thread would. Its argv carries the role, so any other thread tells it is not the worker without loading
// node:worker_threads.
const job = process.argv.includes(workerRole)
  ? (workerThreads().workerData as Partial<ReadJob> | undefined)
  : undefined;
if (job?.role === workerRole) {
  const { dir, port, done } = job as ReadJob;
  let answer: PackedLatest | null = null;
  try {
    answer = pack(readLatest(dir));
  } finally {
    port.postMessage(answer);
    Atomics.store(done, 0, 1);
    Atomics.notify(done, 0);
  }
}

/** An index at least this large is read on a worker thread; a smaller one reads faster than a thread starts. */
const threadFromBytes = 8 * 1024 * 1024;

/**
 * A bundle's latest index being read, for a caller that has other work first. `result()` blocks until it is
 * read.
 */
export interface PendingLatest {
  dir: string;
  /** Whether a worker thread reads it. */
  onThread: boolean;
  result(): LatestIndex;
}

/**
 * Starts reading a bundle's latest index on a worker thread, so that a plan loads its suite meanwhile: a
 * million-row index takes seconds of CPU, and most machines have a second core. A small index, or this module
 * run from its TypeScript source (a worker runs JavaScript only), is read by `result()` on the calling thread;
 * so is any index the worker failed to read or did not answer for within a time that grows with its size (a
 * worker out of memory never answers), so a thread can only make the read earlier, never change it.
 */
export const startReadLatest = (dir: string): PendingLatest => {
  const file = join(dir, indexFile);
  const bytes = existsSync(file) ? statSync(file).size : 0;
  const inThread: PendingLatest = { dir, onThread: false, result: () => readLatest(dir) };
  // The worker's entry sits beside this module, built as it was (dist/bundle/ by tsc, dist/proctor/ by
  // scripts/bundle.js); from the TypeScript sources there is none.
  const built = /\.c?js$/.exec(import.meta.url)?.[0];
  if (bytes < threadFromBytes || built === undefined) return inThread;
  const { MessageChannel, receiveMessageOnPort, Worker } = workerThreads();
  const channel = new MessageChannel();
  const done = new Int32Array(new SharedArrayBuffer(4));
  const read: ReadJob = { role: workerRole, dir, port: channel.port2, done };
  const worker = new Worker(new URL(`./latest-rows-worker${built}`, import.meta.url), {
    argv: [workerRole],
    workerData: read,
    transferList: [channel.port2],
  });
  // Never what keeps the process up: a plan that fails before it asks for the result exits at once. A worker that
  // fails leaves the read to this thread; unheard, its error would end the process.
  worker.unref();
  worker.on('error', () => {});
  // 10 s, and 1 s per 10 MB of index: some 30 times what a read takes on a loaded core.
  const patienceMs = 10_000 + bytes / 10_000;
  return {
    dir,
    onThread: true,
    result: () => {
      const waited = Atomics.wait(done, 0, 0, patienceMs);
      const answer = waited === 'timed-out' ? undefined : receiveMessageOnPort(channel.port1)?.message;
      channel.port1.close();
      void worker.terminate();
      return answer ? unpack(dir, answer as PackedLatest) : inThread.result();
    },
  };
};
