import { describe, expect, it } from 'vitest';
import { KeyTable } from '../../src/bundle/key-table.js';

describe('KeyTable', () => {
  it('numbers each distinct key once, by its bytes wherever they lie, past many regrowths', () => {
    const table = new KeyTable();
    // Keys of one length, keys that are prefixes of others, the empty key and non-ASCII keys.
    const keys = Array.from({ length: 5000 }, (_, i) => `k${i}`).concat(['', 'k1 ', 'ü', 'u', 'é-k1']);
    const ids = keys.map((key) => table.idOfText(key));
    expect(ids).toEqual(keys.map((_, i) => i));
    expect(table.size).toBe(keys.length);
    // The same keys inside a larger buffer, as a row's bytes hold them, find the same numbers.
    const text = Buffer.from(keys.map((key) => `"${key}"`).join(','));
    let from = 0;
    for (const [i, key] of keys.entries()) {
      const length = Buffer.byteLength(key);
      expect(table.idOf(text, from + 1, from + 1 + length), key).toBe(i);
      from += length + 3;
    }
    expect(keys.map((_, i) => table.keyOf(i))).toEqual(keys);
    expect(table.size).toBe(keys.length);
  });
});
