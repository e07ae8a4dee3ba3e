import { ProctorError } from '../errors.js';
import type { Json } from '../records.js';
import type { ContextOp, Store } from '../store/store.js';
import { redact } from './redact.js';

/** A journal position another writer already holds: this process's view of the instance is stale. */
export class StaleCompletionError extends ProctorError {
  constructor(instanceId: string, seq: number) {
    super('internal', `journal position ${seq} of ${instanceId} is taken: stale completion refused`);
  }
}

/**
 * Appends an instance's journal entries at consecutive positions, secrets redacted. The store refuses a
 * position that is taken, so a duplicate or stale completion (a second process, a late retry) never
 * overwrites a newer entry: it fails here instead.
 */
export class JournalWriter {
  constructor(
    private readonly store: Store,
    private readonly instanceId: string,
    private seq: number,
    private readonly secrets: readonly string[],
  ) {}

  /** Returns the entry as written: its position, and its ops and output with secrets redacted. */
  async append(
    stepId: string,
    attempt: number,
    ops: readonly ContextOp[],
    output: Json,
  ): Promise<{ seq: number; ops: ContextOp[]; output: Json }> {
    const seq = ++this.seq;
    const entry = { ops: redact([...ops], this.secrets), output: redact(output, this.secrets) };
    const ok = await this.store.appendJournal({
      instanceId: this.instanceId,
      seq,
      stepId,
      attempt,
      ...entry,
      createdAt: Date.now(),
    });
    if (!ok) throw new StaleCompletionError(this.instanceId, seq);
    return { seq, ...entry };
  }
}
