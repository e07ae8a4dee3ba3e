import { isRecord, type JsonObject } from '../records.js';
import type { ContextOp } from '../store/store.js';
import { applyOps } from './context.js';

/** How to undo one completed step: the inverse of its ops, and the objects they created on their way. */
export interface Undo {
  ops: ContextOp[];
  /** Where a set found no object on its path and applyOps made one (or replaced a scalar), with what was there. */
  created: { path: string; before: unknown }[];
}

const get = (context: JsonObject, path: string): unknown => {
  let at: unknown = context;
  for (const part of path.split('.')) {
    if (!isRecord(at)) return undefined;
    at = at[part];
  }
  return at;
};

/** The first parent of `path` that is not an object yet: a set there creates it. */
const createdOn = (context: JsonObject, path: string): { path: string; before: unknown } | undefined => {
  const parts = path.split('.');
  let node: Record<string, unknown> = context;
  for (let i = 0; i < parts.length - 1; i++) {
    const before = node[parts[i] as string];
    if (!isRecord(before)) return { path: parts.slice(0, i + 1).join('.'), before };
    node = before;
  }
  return undefined;
};

// A scalar (most often nothing: the first step to write `outputs` creates it) needs no clone, and cloning one
// still pays for a serialiser.
const copyOf = <T>(value: T): T => (value !== null && typeof value === 'object' ? structuredClone(value) : value);

/**
 * How to undo `ops`, computed against the context before them: each path gets back its old value, or is unset
 * when it had none (reversed, so a path written twice ends at its first value), and the objects they created.
 */
export const undoOf = (context: JsonObject, ops: readonly ContextOp[]): Undo => ({
  ops: ops
    .map((op): ContextOp => {
      const before = get(context, op.path);
      return before === undefined
        ? { op: 'unset', path: op.path }
        : { op: 'set', path: op.path, value: copyOf(before) };
    })
    .reverse(),
  created: ops.flatMap((op) => {
    const made = op.op === 'set' ? createdOn(context, op.path) : undefined;
    return made ? [{ path: made.path, before: copyOf(made.before) }] : [];
  }),
});

/** An object holding nothing but (objects holding nothing but) objects: what undoing leaves of one it created. */
const hollow = (value: unknown): boolean => isRecord(value) && Object.values(value).every(hollow);

/**
 * The ops of a rollback of completed steps, latest first: each one's undo, then every object it created that is
 * left hollow. Undoing only the leaves would leave `{}` behind, so a re-run span would see a context its first
 * run never saw; dropping the created objects whole would drop what a step beside the span wrote into them.
 */
export const rollbackOps = (context: JsonObject, undos: readonly Undo[]): ContextOp[] => {
  const scratch = structuredClone(context);
  const out: ContextOp[] = [];
  const add = (ops: ContextOp[]): void => {
    applyOps(scratch, ops);
    out.push(...ops);
  };
  for (const undo of undos) {
    add(undo.ops);
    for (const { path, before } of undo.created) {
      if (!hollow(get(scratch, path))) continue;
      add([before === undefined ? { op: 'unset', path } : { op: 'set', path, value: copyOf(before) }]);
    }
  }
  return out;
};
