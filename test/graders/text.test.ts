import { describe, expect, it } from 'vitest';
import { equals } from '../../src/graders/equals.js';
import { quote } from '../../src/graders/text.js';
import { gradeSync } from './input.js';

describe('quote', () => {
  it('quotes short text whole', () => {
    expect(quote('Paris')).toBe('"Paris"');
  });

  it('cuts long text with a Latin-1 marker, so a reason of ASCII text stays Latin-1', () => {
    // One character past Latin-1 makes V8 keep the reason, and every JSON text holding it (result.json, the
    // store's columns), at two bytes per character: ~16 KB more garbage per case with a long `equals` value.
    expect(quote('a'.repeat(100))).toBe(`"${'a'.repeat(80)}..."`);
    const long = `echo: ${'ticket body '.repeat(20)}`;
    for (const output of [long, 'short']) {
      const { reason } = gradeSync(equals.create(equals.config().parse({ value: long }), { baseDir: '/' }), output);
      expect(reason).toMatch(/^[\x20-\xff]*$/);
    }
  });
});
