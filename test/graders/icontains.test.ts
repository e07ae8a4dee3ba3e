import { describe, expect, it } from 'vitest';
import { icontains } from '../../src/graders/icontains.js';
import { gradeSync } from './input.js';

const create = (value: string) => icontains.create(icontains.config().parse({ value }), { baseDir: '/' });

describe('icontains', () => {
  it('ignores case on both sides', () => {
    expect(gradeSync(create('Hello'), 'well HELLO there').pass).toBe(true);
  });

  it('fails when the value is absent', () => {
    const result = gradeSync(create('bye'), 'hello');
    expect(result.pass).toBe(false);
    expect(result.score).toBe(0);
    expect(result.reason).toBe('expected output to contain "bye" (ignoring case)');
  });
});
