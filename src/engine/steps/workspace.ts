import { interpolateEnv } from '../../targets/secrets.js';
import { resolveSpec, workspaceSpecSchema } from '../../workspaces/spec.js';
import { type Resource, resourcesPath, workspacePath } from '../resources.js';
import type { StepDef } from './step.js';

/**
 * Lends the run a workspace slot from this process's pool for its spec (materialised on first use: repos
 * cloned, template copied, setup run) and makes it the workspace later steps run in. Teardown hands the slot
 * back, and the pool resets it to its baseline before anyone else gets it.
 */
export const workspace: StepDef<ReturnType<typeof workspaceSpecSchema>> = {
  config: workspaceSpecSchema,
  async execute(step, ctx) {
    const spec = resolveSpec(step, ctx.baseDir);
    const slot = await ctx.services.workspaces.acquire(
      ctx.workRoot,
      spec,
      { runId: ctx.runId, instanceId: ctx.instanceId },
      {
        signal: ctx.signal,
        env: (s) => ({
          ...(ctx.services.env as Record<string, string>),
          ...interpolateEnv(s.env, ctx.services.env),
          PROCTOR_RUN_ID: ctx.runId,
          PROCTOR_INSTANCE_ID: ctx.instanceId,
        }),
      },
    );
    const resource: Resource = {
      kind: 'workspace',
      path: slot.path,
      slot,
      capture: { files: spec.files, maxBytes: spec.maxBytes },
    };
    return {
      ops: [
        { op: 'set', path: `${resourcesPath}.${ctx.stepId}`, value: resource },
        { op: 'set', path: workspacePath, value: { path: slot.path, step: ctx.stepId, template: spec.template } },
      ],
      output: { path: slot.path, template: spec.template, slot: slot.id },
    };
  },
};
