import { z } from 'zod';
import { once } from '../once.js';
import type { GraderDef } from './grader.js';
import { quote } from './text.js';

const config = once(() => z.strictObject({ value: z.union([z.string().min(1), z.number()]) }));

export const startsWith: GraderDef<ReturnType<typeof config>> = {
  config,
  cheap: true,
  create: ({ value }) => {
    const prefix = String(value);
    const hitReason = `output starts with ${quote(prefix)}`;
    return ({ output }) =>
      output.startsWith(prefix)
        ? { pass: true, score: 1, reason: hitReason }
        : { pass: false, score: 0, reason: `expected output to start with ${quote(prefix)}, got ${quote(output, 40)}` };
  },
};
