import { ProctorError } from '../errors.js';
import type { JournalEntry } from './store.js';

/** A finish one of whose journal entries found its position taken: the whole finish is refused (both stores). */
export const journalTaken = (entry: Pick<JournalEntry, 'seq' | 'instanceId'>, cause?: unknown): ProctorError =>
  new ProctorError('internal', `journal position ${entry.seq} of ${entry.instanceId} is taken`, { cause });
