import { describe, expect, it } from 'vitest';
import { builtConfig, stepConfig } from '../../src/engine/step-config.js';
import { steps } from '../../src/engine/steps/registry.js';
import type { TaskSpec } from '../../src/engine/task.js';
import { packageInfo } from '../../src/package-info.js';
import type { JsonObject } from '../../src/records.js';
import { type QueuedRequest, queuedRequest, requestOf, versionRefusal } from '../../src/runners/queue-request.js';

/** A value as it comes back from the store: plain JSON, no object it shares with the submitter's. */
const stored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('a queued request', () => {
  it("takes the configs its submitter built as built on the worker, and parses a task file's", () => {
    const task: TaskSpec = {
      id: 'case:k',
      vars: {},
      steps: [
        // As a task file writes it: its defaults (env, background) are applied by parsing.
        { id: 'setup', type: 'exec', config: { command: 'true' } },
        {
          id: 'prompt',
          type: 'prompt',
          config: builtConfig(steps.prompt, {
            target: { label: 'echo', kind: 'echo', config: {}, baseDir: '.' },
            prompt: 'hello',
          }),
        },
      ],
    };
    const work = stored(queuedRequest({ groupId: 'g', task, context: {}, retries: 2, metadata: {} }));
    expect(work).toEqual({ retries: 2, built: [1], proctor: packageInfo().version });
    const spec = stored(task) as unknown as JsonObject;
    const run = { groupId: 'g', instanceId: 'i', target: null, metadata: {}, spec, context: {}, startStep: null };
    const req = requestOf('r', { ...run, first: true }, work as QueuedRequest);
    const [setup, prompt] = req.task.steps;
    expect(stepConfig(steps.prompt, prompt?.config ?? {})).toBe(prompt?.config);
    const parsed = stepConfig(steps.exec, setup?.config ?? {});
    expect(parsed).not.toBe(setup?.config);
    expect(parsed).toMatchObject({ command: 'true', env: {}, background: false });
  });

  it('refuses a run submitted with another Proctor version, and accepts its own or one queued before versions were recorded', () => {
    const mine = packageInfo().version;
    expect(versionRefusal({ retries: 0, proctor: mine })).toBeUndefined();
    expect(versionRefusal({ retries: 0 })).toBeUndefined();
    expect(versionRefusal({ retries: 0, proctor: '9.9.9' })).toEqual({
      kind: 'setup_failed',
      message:
        `this worker runs Proctor ${mine} and the run was submitted with Proctor 9.9.9; ` +
        'install the same Proctor version on every worker and on the machines that submit runs',
      retryable: false,
    });
  });
});
