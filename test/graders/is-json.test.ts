import { describe, expect, it } from 'vitest';
import { isJson } from '../../src/graders/is-json.js';
import { gradeSync } from './input.js';

const create = (config: unknown) => isJson.create(isJson.config().parse(config), { baseDir: '/' });

describe('is-json', () => {
  it('passes on any JSON value', () => {
    expect(gradeSync(create({}), '{"a": [1, 2]}')).toEqual({ pass: true, score: 1, reason: 'output is valid JSON' });
    expect(gradeSync(create({}), '  "text"  ').pass).toBe(true);
  });

  it('fails on text that is not JSON, saying why', () => {
    const result = gradeSync(create({}), '```json\n{"a":1}\n```');
    expect(result.pass).toBe(false);
    expect(result.reason).toMatch(/^expected JSON output \(.+\), got "```json/);
  });

  it('checks the schema in value when given', () => {
    const grade = create({ value: { type: 'object', required: ['name'] } });
    expect(gradeSync(grade, '{"name":"x"}').pass).toBe(true);
    const result = gradeSync(grade, '{"age":3}');
    expect(result.pass).toBe(false);
    expect(result.reason).toContain('name');
  });
});
