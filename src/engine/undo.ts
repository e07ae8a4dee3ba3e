import { isRecord, type JsonObject } from '../records.js';
import type { ContextOp } from '../store/store.js';

/**
 * What an op on `path` can change, with its value before: the path itself, or its first part that is not an
 * object yet. applyOp creates (or replaces) an object there, so undoing only the leaf would leave `{}` behind
 * and a retried span would see a context its first run never saw.
 */
const reach = (context: JsonObject, path: string): { path: string; before: unknown } => {
  const parts = path.split('.');
  let node: Record<string, unknown> = context;
  for (let i = 0; ; i++) {
    const before = node[parts[i] as string];
    if (i === parts.length - 1 || !isRecord(before)) return { path: parts.slice(0, i + 1).join('.'), before };
    node = before;
  }
};

/**
 * The ops that undo `ops` when applied after them, computed against the context before them: each path
 * gets back its old value, or is unset when it had none. Reversed, so a path written twice ends at its first value.
 */
export const undoOps = (context: JsonObject, ops: readonly ContextOp[]): ContextOp[] =>
  ops
    .map((op): ContextOp => {
      const { path, before } = reach(context, op.path);
      return before === undefined ? { op: 'unset', path } : { op: 'set', path, value: structuredClone(before) };
    })
    .reverse();
