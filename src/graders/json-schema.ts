import { z } from 'zod';
import { ProctorError } from '../errors.js';
import { once } from '../once.js';
import { compileJsonSchema, type SchemaCheck } from './ajv.js';
import type { GradeResult, GraderDef } from './grader.js';
import { parseJson } from './parse-json.js';
import { messageOf, quote, tail } from './text.js';

/** A JSON Schema, checked by compiling it so a broken schema is reported where the eval file says it. */
export const jsonSchemaValue = () =>
  z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
    try {
      compileJsonSchema(schema);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `invalid JSON Schema: ${messageOf(error)}` });
    }
  });

export const compileOrThrow = (schema: Record<string, unknown>): SchemaCheck => {
  try {
    return compileJsonSchema(schema);
  } catch (error) {
    throw new ProctorError('grader_error', `cannot compile JSON Schema: ${messageOf(error)}`, { cause: error });
  }
};

/** Grades output parsed as JSON against a compiled schema; shared with is-json. */
export const gradeAgainstSchema = (output: string, check: SchemaCheck): GradeResult => {
  const parsed = parseJson(output);
  if (!parsed.ok)
    return { pass: false, score: 0, reason: `expected JSON output (${parsed.error}), got ${quote(output)}` };
  const problems = check(parsed.value);
  return problems === undefined
    ? { pass: true, score: 1, reason: 'output is JSON matching the schema' }
    : { pass: false, score: 0, reason: `output JSON does not match the schema: ${tail(problems, 300)}` };
};

const config = once(() => z.strictObject({ value: jsonSchemaValue() }));

export const jsonSchema: GraderDef<ReturnType<typeof config>> = {
  config,
  create: ({ value }) => {
    const check = compileOrThrow(value);
    return ({ output }) => gradeAgainstSchema(output, check);
  },
};
