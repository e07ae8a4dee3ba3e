import type { Kysely } from 'kysely';
import type { WriteSections } from './direct-sqlite.js';
import { type Reconnect, StoreLostError } from './reconnect.js';

type Write<DB> = (db: Kysely<DB>) => Promise<boolean>;

interface PendingWrite<DB> {
  write: Write<DB>;
  oneStatement: boolean;
  resolve: (ok: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * Commits the writes that arrive in the same tick together, in one transaction: each caller still learns
 * its own statement's result, and a hundred runs in flight cost one commit, not a hundred. A tick with a single
 * one-statement write runs it alone: the statement is its own transaction, and BEGIN and COMMIT would be two
 * more round trips to a PostgreSQL server (a queue worker's ticks mostly hold one write).
 */
export class WriteBatch<DB> {
  private pending: PendingWrite<DB>[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly reconnect: Reconnect,
    private readonly sections: WriteSections<DB>,
  ) {}

  /** `oneStatement`: `write` executes a single statement, atomic without a transaction around it. */
  run(write: Write<DB>, oneStatement = false): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ write, oneStatement, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => void this.flush());
    });
  }

  /** Commits everything queued so far (and waits for a commit already under way). */
  async flush(): Promise<void> {
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
      for (const [i, w] of writes.entries()) w.resolve(results[i] as boolean);
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
