import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach } from 'vitest';
import { runTask } from '../../src/engine/run-task.js';
import { Services } from '../../src/engine/services.js';
import type { RunRequest, StepSpec } from '../../src/engine/task.js';
import type { JsonObject } from '../../src/records.js';
import type { Store } from '../../src/store/store.js';
import { openTempStore, type TempStore } from '../support/temp-store.js';

const fixtures = path.dirname(fileURLToPath(import.meta.url));

/** What an engine test drives: a real SQLite store, a scratch folder with a step log, and the engine's services. */
export interface EngineHarness {
  readonly store: Store;
  /** A fresh folder per test; runs make their work root inside it. */
  readonly dir: string;
  /** The log recorder.mjs steps append to. */
  readonly log: string;
  logLines(): string[];
  /** A module step running test/engine/recorder.mjs with `with` (see there). */
  step(id: string, options?: JsonObject, common?: Partial<StepSpec>): StepSpec;
  request(steps: StepSpec[], extra?: Partial<RunRequest>): RunRequest;
  run(
    req: RunRequest,
    signal?: AbortSignal,
    context?: JsonObject,
    env?: { recordedByResult?: boolean },
  ): ReturnType<typeof runTask>;
}

/** Sets up and tears down a harness around every test of the calling file. */
export const engineHarness = (): EngineHarness => {
  let temp: TempStore | undefined;
  let dir = '';
  let services: Services | undefined;
  let runs = 0;
  beforeEach(async () => {
    temp = await openTempStore();
    dir = mkdtempSync(path.join(tmpdir(), 'proctor-engine-'));
    services = new Services({});
  });
  afterEach(async () => {
    await temp?.remove();
  });
  const harness: EngineHarness = {
    get store() {
      return (temp as TempStore).store;
    },
    get dir() {
      return dir;
    },
    get log() {
      return path.join(dir, 'steps.log');
    },
    logLines: () => (existsSync(harness.log) ? readFileSync(harness.log, 'utf8').split('\n').filter(Boolean) : []),
    step: (id, options = {}, common = {}) => ({
      id,
      type: 'module',
      baseDir: fixtures,
      config: { module: './recorder.mjs', with: { log: harness.log, ...options } },
      ...common,
    }),
    request: (steps, extra = {}) => ({
      runId: `run-${++runs}`,
      groupId: 'group',
      instanceId: `instance-${runs}`,
      task: { id: 'task', vars: {}, steps, workRoot: path.join(dir, 'work') },
      context: {},
      retries: 0,
      metadata: {},
      ...extra,
    }),
    run: (req, signal = new AbortController().signal, context = req.context, env = {}) =>
      runTask(req, {
        store: harness.store,
        services: services as Services,
        signal,
        context: structuredClone(context),
        journalLength: 0,
        ...env,
      }),
  };
  return harness;
};
