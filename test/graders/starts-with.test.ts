import { describe, expect, it } from 'vitest';
import { startsWith } from '../../src/graders/starts-with.js';
import { gradeSync } from './input.js';

const create = (value: string) => startsWith.create(startsWith.config().parse({ value }), { baseDir: '/' });

describe('starts-with', () => {
  it('passes on a prefix', () => {
    expect(gradeSync(create('Yes'), 'Yes, indeed').pass).toBe(true);
  });

  it('fails when the prefix is elsewhere, showing the start of the output', () => {
    const result = gradeSync(create('Yes'), 'I say Yes');
    expect(result.pass).toBe(false);
    expect(result.reason).toBe('expected output to start with "Yes", got "I say Yes"');
  });
});
