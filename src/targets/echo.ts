import { z } from 'zod';
import { CanceledError } from '../errors.js';
import { once } from '../once.js';
import { zeroUsage } from '../records.js';
import { sleep } from '../sleep.js';
import type { TargetDef } from './target.js';
import { singleTurn } from './transcript.js';

const config = once(() =>
  z.strictObject({
    prefix: z.string().default(''),
    delay_ms: z.number().int().nonnegative().default(0),
  }),
);

/** Answers with the prompt itself: offline tests and dry runs of the whole pipeline. */
export const echo: TargetDef<ReturnType<typeof config>> = {
  config,
  create: ({ prefix, delay_ms }) => ({
    invoke: async (input, signal) => {
      if (signal.aborted) throw new CanceledError();
      const started = performance.now();
      if (delay_ms > 0) await sleep(delay_ms, signal);
      const text = `${prefix}${input.prompt}`;
      return {
        text,
        transcript: singleTurn(input.prompt, text),
        usage: zeroUsage(),
        durationMs: performance.now() - started,
      };
    },
  }),
};
