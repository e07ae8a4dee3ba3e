import { z } from 'zod';
import { once } from '../once.js';
import type { GraderDef } from './grader.js';

const config = once(() =>
  z.strictObject({ value: z.number().positive().describe('Most milliseconds the target may take') }),
);

/** The target answered within `value` ms. */
export const latency: GraderDef<ReturnType<typeof config>> = {
  config,
  cheap: true,
  create:
    ({ value }) =>
    ({ durationMs }) => {
      const pass = durationMs <= value;
      return {
        pass,
        score: pass ? 1 : 0,
        reason: `took ${Math.round(durationMs)} ms ${pass ? '<=' : '>'} ${value} ms`,
      };
    },
};
