import path from 'node:path';
import { z } from 'zod';
import { CanceledError, type ErrorKind, errorKinds, ProctorError } from '../../errors.js';
import { importFile } from '../../import-module.js';
import { once } from '../../once.js';
import type { Json } from '../../records.js';
import type { ContextOp } from '../../store/store.js';
import type { StepDef } from './step.js';

const config = once(() =>
  z.strictObject({
    /** A JS file (ESM), relative to the task file. */
    module: z.string().min(1),
    /** The function to call; it receives the step context (see ModuleContext). */
    export: z.string().min(1).default('execute'),
    /** Handed to the function as `ctx.config`. */
    with: z.record(z.string(), z.json()).default({}),
  }),
);

/** What a module's function may return: context changes by dotted path, an output, and whether it passed. */
const resultSchema = once(() =>
  z
    .strictObject({
      set: z.record(z.string().min(1), z.json()).optional(),
      unset: z.array(z.string().min(1)).optional(),
      output: z.json().optional(),
      passed: z.boolean().optional(),
    })
    .optional(),
);

const kindOf = (error: unknown): ErrorKind => {
  const kind = (error as { kind?: unknown } | null)?.kind;
  return errorKinds.includes(kind as ErrorKind) ? (kind as ErrorKind) : 'setup_failed';
};

/**
 * A user's own step: `export async function execute(ctx) { return { set: { 'x.y': 1 }, output: … } }`.
 * The context it sees is a copy, so a module can only change the run through what it returns (journaled).
 */
export const moduleStep: StepDef<ReturnType<typeof config>> = {
  config,
  async execute(step, ctx) {
    const file = path.resolve(ctx.baseDir, step.module);
    let loaded: Record<string, unknown>;
    try {
      loaded = await importFile(file);
    } catch (error) {
      throw new ProctorError('setup_failed', `cannot load module ${file}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const fn = loaded[step.export];
    if (typeof fn !== 'function')
      throw new ProctorError('setup_failed', `${file} exports no function "${step.export}"`);
    let returned: unknown;
    try {
      returned = await (fn as (c: unknown) => unknown)({
        stepId: ctx.stepId,
        runId: ctx.runId,
        instanceId: ctx.instanceId,
        context: structuredClone(ctx.context),
        vars: ctx.vars,
        overrides: ctx.overrides,
        workspace: ctx.workspace,
        config: step.with,
        signal: ctx.signal,
      });
    } catch (error) {
      if (ctx.signal.aborted) throw new CanceledError();
      throw new ProctorError(kindOf(error), `module ${step.module}: ${(error as Error).message ?? String(error)}`, {
        cause: error,
      });
    }
    const parsed = resultSchema().safeParse(returned ?? undefined);
    if (!parsed.success)
      throw new ProctorError('malformed_output', `module ${step.module} returned ${z.prettifyError(parsed.error)}`);
    const r = parsed.data ?? {};
    const ops: ContextOp[] = [
      ...Object.entries(r.set ?? {}).map(([p, value]): ContextOp => ({ op: 'set', path: p, value })),
      ...(r.unset ?? []).map((p): ContextOp => ({ op: 'unset', path: p })),
    ];
    return { ops, output: (r.output ?? null) as Json, ...(r.passed !== undefined ? { passed: r.passed } : {}) };
  },
};
