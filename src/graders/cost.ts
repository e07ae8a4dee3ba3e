import { z } from 'zod';
import { ProctorError } from '../errors.js';
import { once } from '../once.js';
import type { GraderDef } from './grader.js';

const config = once(() =>
  z.strictObject({
    value: z.number().nonnegative().describe('Most USD the target may spend on the case'),
  }),
);

/** The target's spend on the case stays within `value` USD. An unknown cost (no price) cannot be graded. */
export const cost: GraderDef<ReturnType<typeof config>> = {
  config,
  cheap: true,
  create:
    ({ value }) =>
    ({ usage }) => {
      if (usage.costUsd === null)
        throw new ProctorError('grader_error', 'cost is unknown: add a [pricing."MODEL"] entry to proctor.toml');
      const pass = usage.costUsd <= value;
      return { pass, score: pass ? 1 : 0, reason: `cost $${usage.costUsd.toFixed(6)} ${pass ? '<=' : '>'} $${value}` };
    },
};
