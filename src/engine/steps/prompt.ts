import { z } from 'zod';
import { extended } from '../../extended.js';
import { once } from '../../once.js';
import type { Json } from '../../records.js';
import { isSingleTurn } from '../../targets/transcript.js';
import { targetRefSchema } from '../target-ref.js';
import type { StepDef } from './step.js';

const config = once(() =>
  z.object({
    target: targetRefSchema,
    prompt: z.string(),
    /** A chat prompt's messages; `prompt` is then its last user message. */
    messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).optional(),
  }),
);

/**
 * Sends the prompt to a target; keeps the reply in `outputs.<step>` and the full transcript in the step's record.
 * A transcript that is just the prompt and the reply (most calls) is left out of the record, which holds both
 * already: it stored each of them once more in every case's result.json (a 5,000-test suite's: 2.2 → 1.6 KB;
 * a 1,000-case run, 1% fewer instructions). Readers make it again (src/server/case-view.ts).
 */
export const prompt: StepDef<ReturnType<typeof config>> = {
  config,
  async execute(step, ctx) {
    const target = ctx.services.target(step.target);
    const out = await target.invoke(
      {
        prompt: step.prompt,
        vars: ctx.vars,
        ...(step.messages ? { messages: step.messages } : {}),
        ...(ctx.workspace ? { cwd: ctx.workspace } : {}),
      },
      ctx.signal,
    );
    const summary = {
      text: out.text,
      prompt: step.prompt,
      usage: { ...out.usage },
      durationMs: out.durationMs,
      target: step.target.label,
      ...(out.truncated ? { truncated: true } : {}),
      ...(out.replayed ? { replayed: true } : {}),
    };
    // A command target's stdout, stderr and exit code; the transcript only when it says more than prompt and text.
    const commandOutput = out.process ?? null;
    const kept = isSingleTurn(out.transcript, step.prompt, out.text)
      ? { process: commandOutput }
      : { transcript: out.transcript, process: commandOutput };
    return {
      ops: [{ op: 'set', path: `outputs.${ctx.stepId}`, value: summary }],
      output: extended(summary, kept) as unknown as Json,
    };
  },
};
