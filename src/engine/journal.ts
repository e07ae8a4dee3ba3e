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

  private held: Written[] = [];

  /** Returns the entry as written: its position, and its ops and output with secrets redacted. */
  async append(stepId: string, attempt: number, ops: readonly ContextOp[], output: Json): Promise<Written> {
    const entry = this.next(stepId, attempt, ops, output);
    // Positioned before the write starts, with the held entries before it: a completion meanwhile comes after.
    await this.write([...this.takeHeld(), entry]);
    return entry;
  }

  /**
   * Takes the next position for an entry without writing it: the run's finish commits it (`takeHeld`), or the
   * next append writes it first, so the journal keeps its order. Returned whole; kept with its ops (the change,
   * so the journal still replays to the context) and without its output: a held entry is an eval case's,
   * committed with its result, whose result.json holds each step's output, transcript and all.
   */
  hold(stepId: string, attempt: number, ops: readonly ContextOp[], output: Json): Written {
    const entry = this.next(stepId, attempt, ops, output);
    this.held.push({ ...entry, output: null });
    return entry;
  }

  /** Writes the held entries, if any. */
  flush(): Promise<void> {
    return this.write(this.takeHeld());
  }

  /** The held entries in order, now the caller's to commit. */
  takeHeld(): Written[] {
    const held = this.held;
    this.held = [];
    return held;
  }

  /** All or none, in one commit: a refused position leaves nothing of this process's after another's entry. */
  private async write(entries: readonly Written[]): Promise<void> {
    const [first] = entries;
    if (first && !(await this.store.appendJournal(...entries)))
      throw new StaleCompletionError(this.instanceId, first.seq);
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
