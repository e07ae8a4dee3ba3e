import { describe, expect, it } from 'vitest';
import { applyOps } from '../../src/engine/context.js';
import { rollbackOps, undoOf } from '../../src/engine/undo.js';
import type { JsonObject } from '../../src/records.js';
import type { ContextOp } from '../../src/store/store.js';

/** Applies `ops`, then their undo: what a rollback does to a context. */
const roundTrip = (start: JsonObject, ops: ContextOp[]): JsonObject => {
  const context = structuredClone(start);
  const undo = undoOf(context, ops);
  applyOps(context, ops);
  applyOps(context, rollbackOps(context, [undo]));
  return context;
};

describe('undoOf and rollbackOps', () => {
  const start: JsonObject = { kept: 1, outputs: { a: { text: 'x' } }, scalar: 5, list: [1, 2] };

  it.each<[string, ContextOp[]]>([
    ['a new top-level path', [{ op: 'set', path: 'fresh', value: 1 }]],
    ['a path under an object that did not exist', [{ op: 'set', path: 'made.deep.er', value: 1 }]],
    ['a path under an existing object', [{ op: 'set', path: 'outputs.b', value: { text: 'y' } }]],
    ['an overwritten value', [{ op: 'set', path: 'outputs.a.text', value: 'changed' }]],
    [
      'a path through a scalar or a list',
      [
        { op: 'set', path: 'scalar.x', value: 1 },
        { op: 'set', path: 'list.0', value: 9 },
      ],
    ],
    [
      'an unset',
      [
        { op: 'unset', path: 'outputs.a' },
        { op: 'unset', path: 'missing.path' },
      ],
    ],
    [
      'a path written twice',
      [
        { op: 'set', path: 'kept', value: 2 },
        { op: 'set', path: 'kept', value: 3 },
      ],
    ],
  ])('gives back exactly the context before %s', (_, ops) => {
    expect(roundTrip(start, ops)).toEqual(start);
  });
});

it('keeps what was written meanwhile into an object the undone ops created', () => {
  const context: JsonObject = {};
  const ops: ContextOp[] = [{ op: 'set', path: 'made.a', value: 1 }];
  const undo = undoOf(context, ops);
  applyOps(context, ops);
  applyOps(context, [{ op: 'set', path: 'made.side', value: 'kept' }]);
  applyOps(context, rollbackOps(context, [undo]));
  expect(context).toEqual({ made: { side: 'kept' } });
});
