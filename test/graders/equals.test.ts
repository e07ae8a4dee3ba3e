import { describe, expect, it } from 'vitest';
import { equals } from '../../src/graders/equals.js';
import { gradeSync } from './input.js';

const create = (value: unknown) => equals.create(equals.config().parse({ value }), { baseDir: '/' });

describe('equals', () => {
  it('compares strings exactly', () => {
    expect(gradeSync(create('Paris'), 'Paris').pass).toBe(true);
    const result = gradeSync(create('Paris'), 'Paris ');
    expect(result.pass).toBe(false);
    expect(result.reason).toBe('expected output to equal "Paris", got "Paris "');
  });

  it('compares objects to the parsed output, ignoring key order', () => {
    expect(gradeSync(create({ a: 1, b: [1, { c: 'x' }] }), '{"b":[1,{"c":"x"}],"a":1}').pass).toBe(true);
    expect(gradeSync(create({ a: 1 }), '{"a":1,"b":2}').pass).toBe(false);
    expect(gradeSync(create({ a: [1, 2] }), '{"a":[2,1]}').pass).toBe(false);
  });

  it('compares numbers and booleans as JSON', () => {
    expect(gradeSync(create(42), ' 42\n').pass).toBe(true);
    expect(gradeSync(create(42), '42.5').pass).toBe(false);
    expect(gradeSync(create(true), 'true').pass).toBe(true);
    expect(gradeSync(create(false), 'true').pass).toBe(false);
  });

  it('fails, without throwing, when the output is not JSON', () => {
    const result = gradeSync(create({ a: 1 }), 'not json');
    expect(result).toMatchObject({ pass: false, score: 0 });
    expect(result.reason).toContain('non-JSON');
  });
});
