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

/** What a held entry keeps of an op: which path it set or unset. */
const pathOnly = (op: ContextOp): ContextOp => (op.op === 'set' ? { op: 'set', path: op.path, value: undefined } : op);

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
   * next append writes it first, so the journal keeps its order. Returned whole, for the context; kept with its
   * ops' paths only: a held entry is an eval case's, committed with its result, whose result.json holds each
   * step's output, and the entry's output holds it too. Such an entry never serves a resume (a case that dies
   * before its commit is run again whole), so the values would be a third copy of the prompt and the reply.
   */
  hold(stepId: string, attempt: number, ops: readonly ContextOp[], output: Json): Written {
    const entry = this.next(stepId, attempt, ops, output);
    this.held.push({ ...entry, ops: entry.ops.map(pathOnly) });
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
