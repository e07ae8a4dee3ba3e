import type { z } from 'zod';
import type { ConfigReferences, Message, Usage } from '../records.js';

/** What the engine hands a target for one invocation. */
export interface TargetInput {
  prompt: string;
  /** A chat-format prompt: the whole conversation to send (`prompt` is its last user message). */
  messages?: Message[];
  vars: Record<string, unknown>;
  /** The working directory of the case (its workspace), when it has one. */
  cwd?: string;
  /**
   * Ask for a structured answer: a model target forces a call of this tool and returns its input as `toolInput`;
   * a target that cannot (http, cli, echo) ignores it, and the caller reads `text` instead.
   */
  tool?: ToolRequest;
}

/** A tool the model must call: how judges get a grade in a fixed shape. */
export interface ToolRequest {
  name: string;
  description: string;
  /** JSON Schema of the tool's input. */
  schema: Record<string, unknown>;
}

/** What a target returns: plain data, so it can be journaled and replayed. */
export interface TargetOutput {
  text: string;
  transcript: Message[];
  usage: Usage;
  durationMs: number;
  /** The input of the forced tool call, when `tool` was asked for and the model called it. */
  toolInput?: unknown;
  /** The model stopped at its token limit. */
  truncated?: boolean;
  /** Process targets: what the command printed and how it ended. */
  process?: { stdout: string; stderr: string; exitCode: number | null };
  /** Answered from a cassette (`--cassette`), not by the model: it cost nothing now. */
  replayed?: boolean;
}

/** The system under test. Errors leave it as ProctorError with a kind (timeout, rate_limited, …). */
export interface Target {
  invoke(input: TargetInput, signal: AbortSignal): Promise<TargetOutput>;
  /** Embeddings of `texts`, in order: only targets with an embedding endpoint (openai) have it. */
  embed?(texts: string[], signal: AbortSignal): Promise<Embeddings>;
}

/** What an embedding call returns. */
export interface Embeddings {
  vectors: number[][];
  usage: Usage;
  durationMs: number;
}

/** Where a target's relative paths and `${ENV}` references resolve. */
export interface TargetContext {
  /** Directory of the file that declared the target (proctor.toml or the eval file). */
  baseDir: string;
  env: Readonly<Record<string, string | undefined>>;
  /** `judge` when the target grades another's output: its rate limit is kept apart from the target's. */
  role?: 'target' | 'judge';
  /** The label it is declared under, for messages and the progress display. */
  label?: string;
}

/** One kind of target: its config schema and a factory. `secretKeys` are config keys never written to disk. */
export interface TargetDef<C extends z.ZodType = z.ZodType> {
  /** Its config schema, built on the first call and kept (src/once.ts): a registry loads every kind, a command meets few. */
  config: () => C;
  secretKeys?: readonly string[];
  create(config: z.output<C>, context: TargetContext): Target;
  /** Files and commands the config names: their content is part of every case's fingerprint. */
  references?(config: z.output<C>): ConfigReferences;
  /** The billed model, looked up in `[pricing]`; absent for a kind that costs nothing (echo, a local command). */
  model?(config: z.output<C>): string | undefined;
  /** The most tokens one reply may have (`max_tokens`), when the config caps it: a budget's first estimate. */
  maxOutputTokens?(config: z.output<C>): number | undefined;
  /**
   * For a kind whose calls are billed but may name no model (http): whether this config's replies carry their
   * own cost. Absent for a kind that is priced by its model alone, or costs nothing.
   */
  reportsCost?(config: z.output<C>): boolean;
}
