import { cp, mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ProctorError } from '../../errors.js';
import { resourcesPath, runDir, workspacePath } from '../resources.js';
import type { StepDef } from './step.js';

const config = z.strictObject({
  /** A directory copied into the workspace, relative to the task file; absent: an empty workspace. */
  template: z.string().min(1).optional(),
});

/**
 * Makes the run's working directory under `.proctor/work/<instance>/<step>`, from a template or empty, and
 * makes it the workspace later steps run in. Kept small on purpose: pooling and git baselines grow here.
 */
export const workspace: StepDef<typeof config> = {
  config,
  async execute(step, ctx) {
    const dir = path.join(runDir(ctx.workRoot, ctx.instanceId), ctx.stepId);
    const template = step.template === undefined ? null : path.resolve(ctx.baseDir, step.template);
    if (template !== null) {
      const isDir = await stat(template).then(
        (s) => s.isDirectory(),
        () => false,
      );
      if (!isDir) throw new ProctorError('setup_failed', `workspace template ${template} is not a directory`);
    }
    // A rolled-back or re-executed step starts from a clean directory, never from what the last attempt left.
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    if (template !== null) await cp(template, dir, { recursive: true });
    return {
      ops: [
        { op: 'set', path: `${resourcesPath}.${ctx.stepId}`, value: { kind: 'workspace', path: dir } },
        { op: 'set', path: workspacePath, value: { path: dir, step: ctx.stepId, template } },
      ],
      output: { path: dir, template },
    };
  },
};
