import { describe, expect, it } from 'vitest';
import { parsePartialJson } from '../../src/server/partial-json.js';

describe('parsePartialJson', () => {
  it('parses whole JSON exactly as JSON.parse does', () => {
    const value = { a: [1, -2.5e3, true, false, null, 'x\\"y\\n\\u00e9'], b: { c: '' }, d: [] };
    const text = JSON.stringify(value, null, 2);
    expect(parsePartialJson(text)).toEqual({ value: JSON.parse(text), complete: true });
  });

  it('keeps what a cut text holds: open containers closed, a cut string kept, a cut number dropped', () => {
    expect(parsePartialJson('{"a": "hel')).toEqual({ value: { a: 'hel' }, complete: false });
    expect(parsePartialJson('{"a": [1, 2, {"b": tr')).toEqual({ value: { a: [1, 2, {}] }, complete: false });
    expect(parsePartialJson('[12')).toEqual({ value: [], complete: false });
    expect(parsePartialJson('{"a": 1, "b"')).toEqual({ value: { a: 1 }, complete: false });
    expect(parsePartialJson('')).toEqual({ value: undefined, complete: false });
  });

  it('stops where the text stops being JSON, keeping everything before', () => {
    expect(parsePartialJson('{"a": ["x", "y"\n[proctor: truncated]\n')).toEqual({
      value: { a: ['x', 'y'] },
      complete: false,
    });
    expect(parsePartialJson('{"a": 1} trailing')).toEqual({ value: { a: 1 }, complete: false });
  });

  it('makes keys plain own properties, never prototypes', () => {
    const { value } = parsePartialJson('{"__proto__": {"polluted": 1}, "constructor": 2}');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as { polluted?: number }).polluted).toBeUndefined();
    expect(Object.keys(value as object)).toEqual(['__proto__', 'constructor']);
  });
});
