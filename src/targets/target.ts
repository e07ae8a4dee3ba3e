import type { z } from 'zod';
import type { ConfigReferences, Message, Usage } from '../records.js';

/** What the engine hands a target for one invocation. */
export interface TargetInput {
  prompt: string;
  vars: Record<string, unknown>;
  /** The working directory of the case (its workspace), when it has one. */
  cwd?: string;
}

/** What a target returns: plain data, so it can be journaled and replayed. */
export interface TargetOutput {
  text: string;
  transcript: Message[];
  usage: Usage;
  durationMs: number;
  /** Process targets: what the command printed and how it ended. */
  process?: { stdout: string; stderr: string; exitCode: number | null };
}

/** The system under test. Errors leave it as ProctorError with a kind (timeout, rate_limited, …). */
export interface Target {
  invoke(input: TargetInput, signal: AbortSignal): Promise<TargetOutput>;
}

/** Where a target's relative paths and `${ENV}` references resolve. */
export interface TargetContext {
  /** Directory of the file that declared the target (proctor.toml or the eval file). */
  baseDir: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** One kind of target: its config schema and a factory. `secretKeys` are config keys never written to disk. */
export interface TargetDef<C extends z.ZodType = z.ZodType> {
  config: C;
  secretKeys?: readonly string[];
  create(config: z.output<C>, context: TargetContext): Target;
  /** Files and commands the config names: their content is part of every case's fingerprint. */
  references?(config: z.output<C>): ConfigReferences;
}
