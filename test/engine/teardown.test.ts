import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { replay } from '../../src/engine/context.js';
import { resourcesOf } from '../../src/engine/resources.js';
import type { TaskRunResult } from '../../src/engine/run-task.js';
import type { RunRequest, StepSpec } from '../../src/engine/task.js';
import { waitFor } from '../support/cli.js';
import { engineHarness } from './harness.js';

const engine = engineHarness();
const { logLines, step, request, run } = engine;

/**
 * A background service that logs `stopped:<id>` when it gets SIGTERM, after `lingerS` seconds: a service stopped
 * at the same time as a quicker one logs after it, so the log shows whether teardown waited for each in turn.
 */
const service = (id: string, lingerS = 0): StepSpec => ({
  id,
  type: 'exec',
  baseDir: engine.dir,
  config: {
    command: `trap 'sleep ${lingerS}; echo stopped:${id} >> ${engine.log}; exit 0' TERM; while true; do sleep 0.05; done`,
    background: true,
  },
});

/** A workspace-like folder a step made and recorded as its resource, for teardown to remove. */
const folder = (id: string): StepSpec => {
  const made = path.join(engine.dir, 'work', id);
  mkdirSync(made, { recursive: true });
  return step(id, { set: { [`resources.${id}`]: { kind: 'workspace', path: made } } });
};

const pidOf = (result: TaskRunResult, stepId: string): number => {
  const record = result.steps.find((s) => s.stepId === stepId);
  if (!record) throw new Error(`no step ${stepId} in the result`);
  return (record.output as { pid: number }).pid;
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Everything the run made is gone, from the machine and from its recorded context alike. */
const expectTornDown = async (req: RunRequest, result: TaskRunResult, serviceIds: string[]): Promise<void> => {
  // Stopped one at a time, the last made first: the lingering last one still logs first.
  expect(logLines().filter((l) => l.startsWith('stopped:'))).toEqual(serviceIds.map((id) => `stopped:${id}`));
  for (const id of serviceIds) expect(alive(pidOf(result, id))).toBe(false);
  expect(existsSync(path.join(engine.dir, 'work', 'ws'))).toBe(false);
  expect(resourcesOf(result.context)).toEqual([]);
  const journal = await engine.store.readJournal(req.instanceId);
  expect(journal.at(-1)?.stepId).toBe('@teardown');
  expect(resourcesOf(replay(req.context, journal))).toEqual([]);
};

describe('teardown at the end of a run', () => {
  // `second` lingers on SIGTERM: stopped together with `first`, it would log after it.
  const made = () => [folder('ws'), service('first'), service('second', 0.5)];

  it('stops what the run made, last made first, when it completes', async () => {
    const req = request([...made(), step('work')]);
    const result = await run(req);
    expect(result.status).toBe('COMPLETED');
    await expectTornDown(req, result, ['second', 'first']);
  });

  it('stops it when a step fails', async () => {
    const req = request([...made(), step('work', { failTimes: 1 })]);
    const result = await run(req);
    expect(result.status).toBe('FAILED');
    await expectTornDown(req, result, ['second', 'first']);
  });

  it('stops it when the run is canceled', async () => {
    const controller = new AbortController();
    const req = request([...made(), step('work', { hang: true })]);
    const pending = run(req, controller.signal);
    await waitFor(() => logLines().includes('start:work'));
    controller.abort();
    const result = await pending;
    expect(result.status).toBe('CANCELED');
    await expectTornDown(req, result, ['second', 'first']);
  });
});
