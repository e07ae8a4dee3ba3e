import { z } from 'zod';
import { once } from '../once.js';
import type { GraderDef } from './grader.js';
import { messageOf } from './text.js';

const config = once(() =>
  z
    .strictObject({
      value: z.string().min(1),
      flags: z
        .string()
        .regex(/^[dgimsuvy]*$/, 'unknown regex flag')
        .optional(),
    })
    .superRefine(({ value, flags }, ctx) => {
      try {
        new RegExp(value, flags);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['value'], message: messageOf(error) });
      }
    }),
);

export const regex: GraderDef<ReturnType<typeof config>> = {
  config,
  create: ({ value, flags = '' }) => {
    // `g` and `y` make test() stateful through lastIndex, so one case's match would move where the next starts.
    const pattern = new RegExp(value, flags.replace(/[gy]/g, ''));
    const hitReason = `output matches ${pattern}`;
    const missReason = `expected output to match ${pattern}`;
    return ({ output }) =>
      pattern.test(output)
        ? { pass: true, score: 1, reason: hitReason }
        : { pass: false, score: 0, reason: missReason };
  },
};
