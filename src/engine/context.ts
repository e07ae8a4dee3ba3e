import { isRecord, type JsonObject } from '../records.js';
import type { ContextOp } from '../store/store.js';

/** Applies one op in place; a dotted path creates the objects on its way. */
const applyOp = (context: Record<string, unknown>, op: ContextOp): void => {
  const parts = op.path.split('.');
  const last = parts.pop() as string;
  let node: Record<string, unknown> = context;
  for (const part of parts) {
    const next = node[part];
    if (!isRecord(next)) {
      if (op.op === 'unset') return;
      node[part] = {};
    }
    node = node[part] as Record<string, unknown>;
  }
  if (op.op === 'set') node[last] = op.value;
  else delete node[last];
};

export const applyOps = (context: JsonObject, ops: readonly ContextOp[]): void => {
  for (const op of ops) applyOp(context, op);
};

const hasKeys = (value: JsonObject): boolean => {
  for (const _ in value) return true;
  return false;
};

/** Rebuilds a run context: the starting context, then every journal entry's ops in order. */
export const replay = (start: JsonObject, entries: readonly { ops: readonly ContextOp[] }[]): JsonObject => {
  // An eval case starts from `{}`, and a clone of it still pays for a serialiser (~1.7 µs).
  const context = hasKeys(start) ? structuredClone(start) : {};
  for (const entry of entries) applyOps(context, entry.ops);
  return context;
};
