import { describe, expect, it } from 'vitest';
import { Services } from '../../src/engine/services.js';
import type { TaskSpec } from '../../src/engine/task.js';

const task: TaskSpec = { id: 't', vars: {}, steps: [{ id: 's', type: 'exec', config: { command: 'x' } }] };

describe('Services.secrets', () => {
  it('works a run out again when the same task comes with other metadata, and back', () => {
    const services = new Services({});
    const plain = {};
    const typed = { user_overrides: { password: 'typed-password' } };
    expect(services.secrets({ task, metadata: plain })).toEqual([]);
    expect(services.secrets({ task, metadata: typed })).toEqual(['typed-password']);
    expect(services.secrets({ task, metadata: plain })).toEqual([]);
    expect(services.secrets({ task, metadata: typed })).toEqual(['typed-password']);
  });
});
