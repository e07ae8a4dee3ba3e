import { z } from 'zod';
import { once } from '../once.js';
import type { GraderDef } from './grader.js';
import { quote } from './text.js';

const config = once(() => z.strictObject({ value: z.union([z.string().min(1), z.number()]) }));

export const icontains: GraderDef<ReturnType<typeof config>> = {
  config,
  cheap: true,
  create: ({ value }) => {
    const needle = String(value).toLowerCase();
    const hitReason = `output contains ${quote(String(value))} (ignoring case)`;
    const missReason = `expected output to contain ${quote(String(value))} (ignoring case)`;
    return ({ output }) =>
      output.toLowerCase().includes(needle)
        ? { pass: true, score: 1, reason: hitReason }
        : { pass: false, score: 0, reason: missReason };
  },
};
