import { AsyncLocalStorage } from 'node:async_hooks';
import { extended } from '../extended.js';
import type { JsonObject } from '../records.js';
import { CaseCassette, type CassetteMode } from '../targets/cassette.js';
import type { Target, TargetInput, TargetOutput } from '../targets/target.js';
import { redact } from './redact.js';
import type { TargetRef } from './target-ref.js';

/** The cassette of the case running in this async context: its file, its sample, and the run's secrets. */
interface CaseScope {
  cassette: CaseCassette;
  sample: number;
  secrets: readonly string[];
}

const scope = new AsyncLocalStorage<CaseScope>();

/** A case's cassette as its spec names it (`--cassette`): the file relative to the project root, and the mode. */
export interface CassetteRef {
  file: string;
  mode: CassetteMode;
}

/** Runs `fn` (a case's task) with its model calls answered through the case's cassette. */
export const withCaseCassette = <T>(
  file: string,
  ref: CassetteRef,
  sample: number,
  secrets: readonly string[],
  fn: () => Promise<T>,
): Promise<T> => scope.run({ cassette: new CaseCassette(file, ref.mode, ref.file), sample, secrets }, fn);

/** Whether a target kind's calls go through cassettes: model calls do; a command (`cli`) is not replayable. */
export const replayable = (kind: string): boolean => kind !== 'cli';

// Keys that say where and how to call, never what the reply is: a cassette recorded against one endpoint, key
// or timeout replays against another.
const notDeciding = new Set(['api_key', 'api_key_env', 'headers', 'base_url', 'timeout_s', 'max_concurrency']);

/** What decides a call's reply: the target's kind and model settings, the input, the sample; no secret. */
const requestOf = (ref: TargetRef, role: string, input: unknown, sample: number, secrets: readonly string[]) => {
  const settings = Object.fromEntries(Object.entries(ref.config).filter(([k]) => !notDeciding.has(k)));
  return redact({ role, kind: ref.kind, settings, input, sample } as JsonObject, secrets);
};

/**
 * The target with its calls going through the running case's cassette, when it has one (a model kind): record,
 * replay or both, as the case's mode says. A replayed call costs nothing now and says so.
 */
export const cassetteTarget = (target: Target, ref: TargetRef, role: string): Target => ({
  ...target,
  // Without a cassette (most runs) the call is the target's own promise, with no async frame around it.
  invoke: (input, signal) => {
    const current = scope.getStore();
    return current ? throughCassette(target, ref, role, current, input, signal) : target.invoke(input, signal);
  },
});

const throughCassette = async (
  target: Target,
  ref: TargetRef,
  role: string,
  current: CaseScope,
  input: TargetInput,
  signal: AbortSignal,
): Promise<TargetOutput> => {
  const { cwd: _cwd, ...deciding } = input;
  const request = requestOf(ref, role, deciding, current.sample, current.secrets);
  let live: TargetOutput | undefined;
  const reply = await current.cassette.call(request, async () => {
    live = await target.invoke(input, signal);
    return { response: redact(live as unknown as JsonObject, current.secrets), latencyMs: live.durationMs };
  });
  if (live) return live;
  const out = reply.response as unknown as TargetOutput;
  return extended(out, { usage: { ...out.usage, costUsd: 0 }, replayed: true });
};
