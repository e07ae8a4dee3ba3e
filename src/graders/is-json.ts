import { z } from 'zod';
import { once } from '../once.js';
import type { GraderDef } from './grader.js';
import { compileOrThrow, gradeAgainstSchema, jsonSchemaValue } from './json-schema.js';
import { parseJson } from './parse-json.js';
import { quote } from './text.js';

const config = once(() => z.strictObject({ value: jsonSchemaValue().optional() }));

/** Passes when the output parses as JSON, and matches `value` when a schema is given. */
export const isJson: GraderDef<ReturnType<typeof config>> = {
  config,
  create: ({ value }) => {
    if (value !== undefined) {
      const check = compileOrThrow(value);
      return ({ output }) => gradeAgainstSchema(output, check);
    }
    return ({ output }) => {
      const parsed = parseJson(output);
      return parsed.ok
        ? { pass: true, score: 1, reason: 'output is valid JSON' }
        : { pass: false, score: 0, reason: `expected JSON output (${parsed.error}), got ${quote(output)}` };
    };
  },
};
