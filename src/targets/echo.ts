import { z } from 'zod';
import { CanceledError } from '../errors.js';
import { zeroUsage } from '../records.js';
import type { TargetDef } from './target.js';

const config = z.strictObject({
  prefix: z.string().default(''),
  delay_ms: z.number().int().nonnegative().default(0),
});

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new CanceledError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** Answers with the prompt itself: offline tests and dry runs of the whole pipeline. */
export const echo: TargetDef<typeof config> = {
  config,
  create: ({ prefix, delay_ms }) => ({
    invoke: async (input, signal) => {
      if (signal.aborted) throw new CanceledError();
      const started = performance.now();
      if (delay_ms > 0) await sleep(delay_ms, signal);
      const text = `${prefix}${input.prompt}`;
      return {
        text,
        transcript: [
          { role: 'user', content: input.prompt },
          { role: 'assistant', content: text },
        ],
        usage: zeroUsage(),
        durationMs: performance.now() - started,
      };
    },
  }),
};
