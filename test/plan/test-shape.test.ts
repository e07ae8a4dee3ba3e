// The quick look that stands in for a test's zod parse must never let through what the schema refuses, nor
// take a value the schema would change: whatever it accepts is used as it is.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testSchema } from '../../src/plan/eval-schema.js';
import { plainTest } from '../../src/plan/test-shape.js';

const schema = testSchema(z.unknown());

const candidates: Record<string, unknown>[] = [
  { id: 't1', vars: { q: 'a', n: 1, list: [1, 'x', null, { deep: true }] }, assert: [{ type: 'contains' }] },
  { id: 7, description: 'seven', threshold: 0.5, repeat: 2, metadata: { owner: 'me' } },
  {},
  { id: '' },
  { id: 1.5 },
  { id: null },
  { vars: { x: Number.POSITIVE_INFINITY } },
  { vars: { x: Number.NaN } },
  { vars: [] },
  { vars: null },
  { vars: { x: undefined } },
  { vars: JSON.parse('{"__proto__": "x"}') },
  { vars: { x: new Date(0) } },
  { metadata: 'm' },
  { assert: {} },
  { threshold: 1.5 },
  { threshold: -0.1 },
  { repeat: 0 },
  { repeat: 1.5 },
  { before: [{ id: 's', type: 'exec' }] },
  { unknown: 1 },
  { description: 3 },
];

describe('a test mapping taken as it is', () => {
  it('is one the schema accepts and returns unchanged', () => {
    let taken = 0;
    for (const raw of candidates) {
      if (!plainTest(raw)) continue;
      taken++;
      const parsed = schema.safeParse(raw);
      expect(parsed.success, JSON.stringify(raw)).toBe(true);
      expect(parsed.data).toEqual(raw);
    }
    expect(taken).toBe(3);
  });
});
