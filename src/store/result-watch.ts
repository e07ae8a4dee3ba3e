import type { CaseResultRecord, ResultText, ResultWatch } from './store.js';

/**
 * The watched groups' results this store is committing or has committed, by run id. Held from before the
 * commit, so no reader can see a result committed before its copy is here; dropped when the finish is refused
 * or fails, so only committed results stay until taken.
 */
export class ResultWatches {
  private readonly groups = new Map<string, Map<string, ResultText>>();

  watch(groupId: string): ResultWatch {
    const held = new Map<string, ResultText>();
    this.groups.set(groupId, held);
    return {
      take: (runId) => {
        const text = held.get(runId);
        held.delete(runId);
        return text;
      },
      close: () => {
        if (this.groups.get(groupId) === held) this.groups.delete(groupId);
      },
    };
  }

  /**
   * Holds a result about to be committed, if its group is watched; returns how to drop it again. A run holds one
   * result at most: a second finish (refused, as the run is terminal or finishing) must not replace the one the
   * store may have committed, so it holds nothing, and the reader reads the committed one from the store.
   */
  hold(groupId: string, runId: string, r: CaseResultRecord, row: string): (() => void) | undefined {
    const held = this.groups.get(groupId);
    if (!held || held.has(runId)) return undefined;
    const text = { runId, caseKey: r.caseKey, attempt: r.attempt, row, files: r.files };
    held.set(runId, text);
    return () => {
      if (held.get(runId) === text) held.delete(runId);
    };
  }
}
