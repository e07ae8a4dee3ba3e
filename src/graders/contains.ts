import { z } from 'zod';
import { once } from '../once.js';
import type { GraderDef } from './grader.js';
import { quote } from './text.js';

// Numbers are accepted because YAML reads `value: 42` as one; the output is always text.
const config = once(() => z.strictObject({ value: z.union([z.string().min(1), z.number()]) }));

export const contains: GraderDef<ReturnType<typeof config>> = {
  config,
  cheap: true,
  create: ({ value }) => {
    const needle = String(value);
    const hitReason = `output contains ${quote(needle)}`;
    const missReason = `expected output to contain ${quote(needle)}`;
    return ({ output }) =>
      output.includes(needle)
        ? { pass: true, score: 1, reason: hitReason }
        : { pass: false, score: 0, reason: missReason };
  },
};
