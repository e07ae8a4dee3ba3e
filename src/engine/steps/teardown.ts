import { z } from 'zod';
import { once } from '../../once.js';
import { resourcesOf } from '../resources.js';
import { tearDown } from '../teardown.js';
import type { StepDef, StepResult } from './step.js';

const config = once(() =>
  z.strictObject({
    /** Only the resources these steps made; default every resource so far. */
    only: z.array(z.string().min(1)).optional(),
  }),
);

/**
 * Stops services and removes workspaces before the task ends (the engine tears down the rest after it).
 * Under `--keep` it leaves everything up: the CLI holds and tears down from the stored instance.
 */
export const teardown: StepDef<ReturnType<typeof config>> = {
  config,
  async execute(step, ctx): Promise<StepResult> {
    if (ctx.keep) return { ops: [], output: { kept: true } };
    const all = resourcesOf(ctx.context);
    const chosen = step.only ? all.filter(([id]) => step.only?.includes(id)) : all;
    const ops = await tearDown(chosen, ctx.context, ctx.services.workspaces);
    return { ops, output: { removed: chosen.map(([id]) => id) } };
  },
};
