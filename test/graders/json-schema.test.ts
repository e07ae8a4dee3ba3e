import { describe, expect, it } from 'vitest';
import { jsonSchema } from '../../src/graders/json-schema.js';
import { gradeSync } from './input.js';

const create = (value: unknown) => jsonSchema.create(jsonSchema.config().parse({ value }), { baseDir: '/' });

const person = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
  required: ['name', 'age'],
  additionalProperties: false,
};

describe('json-schema', () => {
  it('passes on JSON matching the schema', () => {
    expect(gradeSync(create(person), '{"name":"Ada","age":36}')).toEqual({
      pass: true,
      score: 1,
      reason: 'output is JSON matching the schema',
    });
  });

  it('fails with every violation in the reason', () => {
    const result = gradeSync(create(person), '{"name":7,"age":-1}');
    expect(result.pass).toBe(false);
    expect(result.reason).toContain('output/name must be string');
    expect(result.reason).toContain('output/age must be >= 0');
  });

  it('fails on output that is not JSON', () => {
    const result = gradeSync(create(person), 'Ada, 36');
    expect(result.pass).toBe(false);
    expect(result.reason).toContain('expected JSON output');
  });

  it('understands draft 2020-12 schemas, as zod emits them', () => {
    const grade = create({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      prefixItems: [{ type: 'number' }],
    });
    expect(gradeSync(grade, '[1]').pass).toBe(true);
    expect(gradeSync(grade, '["x"]').pass).toBe(false);
  });

  it('lets two assertions share a schema $id', () => {
    const withId = { $id: 'https://example.com/person', ...person };
    create(withId);
    expect(gradeSync(create({ ...withId }), '{"name":"Ada","age":1}').pass).toBe(true);
  });

  it('rejects an invalid schema at validation', () => {
    const parsed = jsonSchema.config().safeParse({ value: { type: 'no-such-type' } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain('invalid JSON Schema');
  });
});
