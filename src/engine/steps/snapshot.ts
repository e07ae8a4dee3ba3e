import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { ProctorError } from '../../errors.js';
import { once } from '../../once.js';
import { isRecord } from '../../records.js';
import { captureSlot, listFiles } from '../../workspaces/capture.js';
import type { SlotRef } from '../../workspaces/slot.js';
import { resourcesOf } from '../resources.js';
import type { StepContext, StepDef } from './step.js';

const config = once(() =>
  z.strictObject({
    /** Files or directories to collect, relative to the workspace. */
    files: z.array(z.string().min(1)).default([]),
    /** Also collect the workspace's diff against its baseline (a pooled slot) or its template (or against empty). */
    diff: z.boolean().default(true),
    /** A larger file is listed as skipped: artifacts live in the journal, which is not a blob store. */
    max_bytes: z.int().positive().default(1_000_000),
  }),
);

/** `git diff --no-index` of two trees, with both roots cut from the paths so the patch applies in a workspace. */
const treeDiff = async (before: string, after: string, signal: AbortSignal): Promise<string> => {
  // Loaded on first use: execa costs ~90 ms of CPU that a command starting no process should not pay.
  const { execa } = await import('execa');
  const r = await execa('git', ['diff', '--no-index', '--no-color', '--', before, after], {
    reject: false,
    cancelSignal: signal,
  });
  // Exit 1 means "differences found"; anything else is git failing.
  if (r.exitCode !== 0 && r.exitCode !== 1)
    throw new ProctorError('setup_failed', `git diff failed: ${String(r.stderr ?? '').slice(0, 500)}`);
  return String(r.stdout ?? '')
    .replaceAll(`a${before}/`, 'a/')
    .replaceAll(`b${after}/`, 'b/');
};

const template = (ctx: StepContext): string | null => {
  const ws = ctx.context.workspace;
  return isRecord(ws) && typeof ws.template === 'string' ? ws.template : null;
};

const slotOf = (ctx: StepContext): SlotRef | undefined => {
  const ws = ctx.context.workspace;
  const stepId = isRecord(ws) ? ws.step : undefined;
  const held = resourcesOf(ctx.context).find(([id]) => id === stepId)?.[1];
  return held?.kind === 'workspace' ? held.slot : undefined;
};

/** Collects files of the workspace and its diff; the contents go to the journal, from which artifacts are written. */
export const snapshot: StepDef<ReturnType<typeof config>> = {
  config,
  async execute(step, ctx) {
    const ws = ctx.workspace;
    if (!ws) throw new ProctorError('setup_failed', `snapshot step "${ctx.stepId}" needs a workspace step before it`);
    const names: string[] = [];
    for (const f of step.files) await listFiles(ws, f, names);
    const files: Record<string, string> = {};
    const skipped: string[] = [];
    for (const name of names) {
      const full = path.join(ws, name);
      if ((await stat(full)).size > step.max_bytes) skipped.push(name);
      else files[name.split(path.sep).join('/')] = await readFile(full, 'utf8');
    }
    let diff: string | null = null;
    const slot = slotOf(ctx);
    if (step.diff && slot) {
      // A pooled workspace diffs against its baseline (repos and setup output included), not its template.
      const captured = await captureSlot(slot, [], step.max_bytes);
      if (captured.diff === null) throw new ProctorError('setup_failed', `workspace diff failed: ${captured.error}`);
      diff = captured.diff;
    } else if (step.diff) {
      const base = template(ctx);
      const empty = base === null ? await mkdtemp(path.join(tmpdir(), 'proctor-empty-')) : null;
      try {
        diff = await treeDiff(base ?? (empty as string), ws, ctx.signal);
      } finally {
        if (empty) await rm(empty, { recursive: true, force: true });
      }
    }
    const summary = { files: Object.keys(files), skipped, diff_bytes: diff === null ? null : Buffer.byteLength(diff) };
    return {
      ops: [{ op: 'set', path: `snapshots.${ctx.stepId}`, value: summary }],
      output: { files, skipped, diff },
    };
  },
};
