// Keys and fingerprints are compared with those of bundles written by earlier versions (`--resume`, drift):
// however they are computed, the same identity and parts must give the same strings as before.
import { describe, expect, it } from 'vitest';
import { caseKey, fingerprintOf } from '../../src/plan/identity.js';
import { stableJson } from '../../src/stable-json.js';

describe('case keys and fingerprints', () => {
  it('are those earlier versions wrote', () => {
    expect(caseKey({ eval: 'suite.eval.yaml', test: 't1', prompt: 'p1', target: 'echo', sample: 0 })).toBe(
      '1831f3ab7bfce40437fd',
    );
    expect(fingerprintOf(['Ticket REF-1', { ref: 'REF-1' }, '{"config":{"value":"REF-1"}}', 1])).toBe(
      'd2fa8185558af6a19398',
    );
  });

  it('serialise with keys sorted at every depth, undefined members left out', () => {
    const value = {
      z: [1, 'two', null, { b: undefined, a: true, 10: 'x', 2: 'y' }],
      a: { 'é"q': 'line\nbreak', n: -0.5 },
      u: undefined,
      e: {},
      l: [],
    };
    expect(stableJson(value)).toBe(
      '{"a":{"n":-0.5,"é\\"q":"line\\nbreak"},"e":{},"l":[],"z":[1,"two",null,{"10":"x","2":"y","a":true}]}',
    );
  });

  it('serialise what is not plain data as they did: functions as null, objects by their own keys', () => {
    class Getter {
      b = 2;
      get a(): number {
        return 1;
      }
    }
    expect(stableJson({ f: () => 1, a: 1 })).toBe('{"a":1,"f":null}');
    expect(stableJson([() => 1, undefined])).toBe('[null,null]');
    expect(stableJson({ d: new Date(0) })).toBe('{"d":{}}');
    expect(stableJson({ c: new Getter(), x: { a: 5 } })).toBe('{"c":{"b":2},"x":{"a":5}}');
    expect(stableJson({ p: JSON.parse('{"__proto__":{"x":1}}'), q: { a: 1 } })).toBe(
      '{"p":{"__proto__":{"x":1}},"q":{"a":1}}',
    );
    expect(stableJson(Object.assign(Object.create(null), { b: 1, a: [{ '9': 0, '10': 1 }] }))).toBe(
      '{"a":[{"10":1,"9":0}],"b":1}',
    );
  });

  it('serialise values already in key order as they did, what is not plain data among them', () => {
    expect(stableJson({ a: 1, f: () => 1 })).toBe('{"a":1,"f":null}');
    expect(stableJson({ a: [undefined, () => 1], b: undefined })).toBe('{"a":[null,null]}');
    expect(stableJson({ a: new Date(0), b: { toJSON: () => 'x' } })).toBe('{"a":{},"b":{"toJSON":null}}');
    expect(stableJson({ a: Symbol('s'), b: [Symbol('t')] })).toBe('{"a":null,"b":[null]}');
    expect(stableJson({ 1: 'one', 2: { a: 'é"\n', b: [1.5, -0, null, true] } })).toBe(
      '{"1":"one","2":{"a":"é\\"\\n","b":[1.5,0,null,true]}}',
    );
  });
});
