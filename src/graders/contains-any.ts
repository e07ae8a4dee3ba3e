import { z } from 'zod';
import { once } from '../once.js';
import type { GraderDef } from './grader.js';
import { quote } from './text.js';

const config = once(() => z.strictObject({ value: z.array(z.string().min(1)).min(1) }));

export const containsAny: GraderDef<ReturnType<typeof config>> = {
  config,
  cheap: true,
  create: ({ value }) => {
    const missReason = `expected output to contain any of ${value.map((v) => quote(v)).join(', ')}`;
    return ({ output }) => {
      const found = value.find((needle) => output.includes(needle));
      return found === undefined
        ? { pass: false, score: 0, reason: missReason }
        : { pass: true, score: 1, reason: `output contains ${quote(found)}` };
    };
  },
};
