import type { Kysely } from 'kysely';
import type { WriteSections } from './direct-sqlite.js';
import { type Reconnect, StoreLostError } from './reconnect.js';
import type { CommitPace } from './store.js';

type Write<DB> = (db: Kysely<DB>) => Promise<boolean>;

interface PendingWrite<DB> {
  write: Write<DB>;
  oneStatement: boolean;
  resolve: (ok: boolean) => void;
  reject: (error: unknown) => void;
}

/** Grouped writes pending at which they commit without waiting out the window: a commit stays a few MB. */
const groupedCap = 256;

/**
 * Commits the writes that arrive in the same tick together, in one transaction: each caller still learns
 * its own statement's result, and a hundred runs in flight cost one commit, not a hundred. A tick with a single
 * one-statement write runs it alone: the statement is its own transaction, and BEGIN and COMMIT would be two
 * more round trips to a PostgreSQL server (a queue worker's ticks mostly hold one write).
 *
 * Writes whose pace is `grouped` wait up to `groupMs` for others, unless a `now` write comes and takes them
 * along: an eval case's claim and finish free no slot and hold up no step, and on SQLite a commit's cost is
 * mostly its WAL pages, which a commit of a few more cases shares (a 5,000-case run at `-j 50`: ~970 commits
 * at the next turn, ~230 at 20 ms, and ~7% less CPU).
 */
export class WriteBatch<DB> {
  private pending: PendingWrite<DB>[] = [];
  private flushing: Promise<void> | undefined;
  private scheduled: 'turn' | NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly reconnect: Reconnect,
    private readonly sections: WriteSections<DB>,
    private readonly groupMs = 0,
  ) {}

  /** `oneStatement`: `write` executes a single statement, atomic without a transaction around it. */
  run(write: Write<DB>, oneStatement = false, pace: CommitPace = 'now'): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ write, oneStatement, resolve, reject });
      this.schedule(pace === 'grouped' && this.groupMs > 0 && this.pending.length < groupedCap);
    });
  }

  /** Grouped writes pending commit on the next turn, not at their window's end: none are coming to join them. */
  hurry(): void {
    if (this.scheduled === undefined || this.scheduled === 'turn') return;
    this.schedule(false);
  }

  private schedule(grouped: boolean): void {
    if (this.scheduled === 'turn') return;
    if (grouped) {
      this.scheduled ??= setTimeout(() => void this.flush(), this.groupMs);
      return;
    }
    if (this.scheduled !== undefined) clearTimeout(this.scheduled);
    this.scheduled = 'turn';
    setImmediate(() => void this.flush());
  }

  /** Commits everything queued so far (and waits for a commit already under way). */
  async flush(): Promise<void> {
    if (this.scheduled !== undefined && this.scheduled !== 'turn') clearTimeout(this.scheduled);
    this.scheduled = undefined;
    await this.flushing;
    const writes = this.pending;
    this.pending = [];
    if (writes.length === 0) return;
    this.flushing = this.commit(writes);
    await this.flushing;
  }

  private async commit(writes: PendingWrite<DB>[]): Promise<void> {
    const [only] = writes;
    if (writes.length === 1 && only?.oneStatement) {
      await this.reconnect.run(() => this.sections.single(this.db, only.write)).then(only.resolve, only.reject);
      return;
    }
    try {
      const results = await this.reconnect.run(() =>
        this.sections.transaction(this.db, async (trx) => {
          const out: boolean[] = [];
          for (const w of writes) out.push(await w.write(trx));
          return out;
        }),
      );
      for (let i = 0; i < writes.length; i++) writes[i]?.resolve(results[i] as boolean);
    } catch (error) {
      if (error instanceof StoreLostError) {
        // Still no connection after every retry: replaying one by one would only wait as long again, each.
        for (const w of writes) w.reject(error);
        return;
      }
      // One bad statement must not fail its neighbours: replay them one by one, each with its own outcome, and
      // each write of several statements in a transaction of its own (a status never without its result).
      for (const w of writes)
        await this.reconnect
          .run(() => (w.oneStatement ? this.sections.single : this.sections.transaction)(this.db, w.write))
          .then(w.resolve, w.reject);
    }
  }
}
