import type { StepSpec } from '../../src/engine/task.js';
import type { SubmitRequest } from '../../src/runners/runner.js';

export interface EchoRunOptions {
  /** How long the echo target takes to answer: how long the run stays RUNNING. */
  delayMs?: number;
  groupId?: string;
  runId?: string;
  /** Steps before the prompt, e.g. to make a run slow in a way that ignores cancellation. */
  before?: StepSpec[];
  /** An eval case's run: its result is committed with its status (no verify step, so its outcome is `error`). */
  evalCase?: boolean;
}

/** A one-step task (a prompt to the `echo` target) as a runner receives it: plain data, no bundle. */
export const echoRun = (options: EchoRunOptions = {}): SubmitRequest => ({
  groupId: options.groupId ?? 'conformance',
  ...(options.runId ? { runId: options.runId } : {}),
  task: {
    id: 'echo-task',
    vars: {},
    steps: [
      ...(options.before ?? []),
      {
        id: 'ask',
        type: 'prompt',
        config: {
          target: { label: 'echo', kind: 'echo', config: { delay_ms: options.delayMs ?? 0 }, baseDir: '.' },
          prompt: 'hello',
        },
      },
    ],
  },
  context: {},
  retries: 0,
  metadata: {},
  target: 'echo',
  ...(options.evalCase
    ? {
        case: {
          identity: { eval: 'echo.eval.yaml', test: 't1', prompt: 'p1', target: 'echo', sample: 0 },
          key: `key-${options.runId ?? 'echo'}`,
          fingerprint: 'echo-print',
          attempt: 1,
          verifierId: 'main',
        },
      }
    : {}),
});

/**
 * A step that ignores cancellation for `seconds`: a `cli` target whose shell ignores SIGTERM, and a kill
 * grace longer than the test, so only the step's own end stops it.
 */
export const stubbornStep = (seconds: number): StepSpec => ({
  id: 'stubborn',
  type: 'prompt',
  config: {
    target: {
      label: 'stubborn',
      kind: 'cli',
      config: { command: `trap '' TERM; sleep ${seconds}`, kill_grace_s: 600 },
      baseDir: '.',
    },
    prompt: 'ignored',
  },
});
