import { z } from 'zod';
import { once } from '../once.js';
import type { GraderDef } from './grader.js';
import { quote } from './text.js';

const config = once(() => z.strictObject({ value: z.array(z.string().min(1)).min(1) }));

/** Scores the share of needles found, so an assertion `threshold` can accept most of them; passes on all. */
export const containsAll: GraderDef<ReturnType<typeof config>> = {
  config,
  cheap: true,
  create: ({ value }) => {
    const hitReason = `output contains all of ${value.map((v) => quote(v)).join(', ')}`;
    return ({ output }) => {
      const missing = value.filter((needle) => !output.includes(needle));
      if (missing.length === 0) return { pass: true, score: 1, reason: hitReason };
      return {
        pass: false,
        score: (value.length - missing.length) / value.length,
        reason: `expected output to contain ${missing.map((v) => quote(v)).join(', ')} (${missing.length} of ${value.length} missing)`,
      };
    };
  },
};
