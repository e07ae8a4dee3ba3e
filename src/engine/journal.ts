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

  /** Returns the entry as written: its position, and its ops and output with secrets redacted. */
  async append(stepId: string, attempt: number, ops: readonly ContextOp[], output: Json): Promise<Written> {
    const entry = this.next(stepId, attempt, ops, output);
    if (!(await this.store.appendJournal(entry))) throw new StaleCompletionError(this.instanceId, entry.seq);
    return entry;
  }

  /**
   * A completion's ops and output as `append` would write them, secrets redacted, neither written nor given a
   * position: an eval case's step that records no resource, whose completion its result records (result.json
   * holds each step's record). The journal's positions stay consecutive, so a stale view still finds its next
   * position taken.
   */
  redacted(ops: readonly ContextOp[], output: Json): Pick<Written, 'ops' | 'output'> {
    return { ops: redact([...ops], this.secrets), output: redact(output, this.secrets) };
  }

  private next(stepId: string, attempt: number, ops: readonly ContextOp[], output: Json): Written {
    const written = this.redacted(ops, output);
    return {
      instanceId: this.instanceId,
      seq: ++this.seq,
      stepId,
      attempt,
      ops: written.ops,
      output: written.output,
      createdAt: Date.now(),
    };
  }
}
