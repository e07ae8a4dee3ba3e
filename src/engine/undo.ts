import type { JsonObject } from '../records.js';
import type { ContextOp } from '../store/store.js';

const get = (context: JsonObject, path: string): unknown => {
  let at: unknown = context;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
};

/**
 * The ops that undo `ops` when applied after them, computed against the context before them: each path
 * gets back its old value, or is unset when it had none. Reversed, so a path written twice ends at its first value.
 */
export const undoOps = (context: JsonObject, ops: readonly ContextOp[]): ContextOp[] =>
  ops
    .map((op): ContextOp => {
      const before = get(context, op.path);
      return before === undefined
        ? { op: 'unset', path: op.path }
        : { op: 'set', path: op.path, value: structuredClone(before) };
    })
    .reverse();
