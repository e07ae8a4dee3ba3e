import { z } from 'zod';
import { once } from '../once.js';
import type { GradeResult, GraderDef } from './grader.js';
import { jsonEqual } from './json-equal.js';
import { parseJson } from './parse-json.js';
import { quote } from './text.js';

const config = once(() =>
  z.strictObject({
    value: z.union([
      z.string(),
      z.number(),
      z.boolean(),
      z.null(),
      z.array(z.unknown()),
      z.record(z.string(), z.unknown()),
    ]),
  }),
);

/** A string is compared to the output as text; any other value to the output parsed as JSON. */
export const equals: GraderDef<ReturnType<typeof config>> = {
  config,
  cheap: true,
  create: ({ value }) => {
    if (typeof value === 'string') {
      const hitReason = `output equals ${quote(value)}`;
      return ({ output }) =>
        output === value
          ? { pass: true, score: 1, reason: hitReason }
          : { pass: false, score: 0, reason: `expected output to equal ${quote(value)}, got ${quote(output)}` };
    }
    const expected = JSON.stringify(value);
    const hitReason = `output equals ${quote(expected)} as JSON`;
    return ({ output }): GradeResult => {
      const parsed = parseJson(output);
      if (!parsed.ok) {
        return {
          pass: false,
          score: 0,
          reason: `expected JSON equal to ${quote(expected)}, got non-JSON ${quote(output)}`,
        };
      }
      return jsonEqual(parsed.value, value)
        ? { pass: true, score: 1, reason: hitReason }
        : { pass: false, score: 0, reason: `expected JSON equal to ${quote(expected)}, got ${quote(output)}` };
    };
  },
};
