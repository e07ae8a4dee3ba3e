import { ProctorError } from '../errors.js';
import type { Json } from '../records.js';
import type { ContextOp, JournalEntry, Store } from '../store/store.js';
import { redact } from './redact.js';

/** A journal position another writer already holds: this process's view of the instance is stale. */
export class StaleCompletionError extends ProctorError {
  constructor(instanceId: string, seq: number) {
    super('internal', `journal position ${seq} of ${instanceId} is taken: stale completion refused`);
  }
}

/** An entry as the journal keeps it: secrets redacted. */
export type Written = JournalEntry & { output: Json };

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

  private held: Written | undefined;

  /** Returns the entry as written: its position, and its ops and output with secrets redacted. */
  async append(stepId: string, attempt: number, ops: readonly ContextOp[], output: Json): Promise<Written> {
    await this.flush();
    const entry = this.next(stepId, attempt, ops, output);
    if (!(await this.store.appendJournal(entry))) throw new StaleCompletionError(this.instanceId, entry.seq);
    return entry;
  }

  /**
   * Takes the next position for an entry without writing it: the run's finish commits it (`takeHeld`), or the
   * next append writes it first, so the journal keeps its order.
   */
  hold(stepId: string, attempt: number, ops: readonly ContextOp[], output: Json): Written {
    this.held = this.next(stepId, attempt, ops, output);
    return this.held;
  }

  /** Writes the held entry, if any. */
  async flush(): Promise<void> {
    const held = this.takeHeld();
    if (held && !(await this.store.appendJournal(held))) throw new StaleCompletionError(this.instanceId, held.seq);
  }

  /** The held entry, now the caller's to commit. */
  takeHeld(): Written | undefined {
    const held = this.held;
    this.held = undefined;
    return held;
  }

  private next(stepId: string, attempt: number, ops: readonly ContextOp[], output: Json): Written {
    return {
      instanceId: this.instanceId,
      seq: ++this.seq,
      stepId,
      attempt,
      ops: redact([...ops], this.secrets),
      output: redact(output, this.secrets),
      createdAt: Date.now(),
    };
  }
}
