/** Plain data shapes that cross every layer: identity, usage, transcript, outcome. A leaf: imports nothing. */

/** The identity of one case of the matrix. `eval` is the repo-relative POSIX path of the eval file. */
export interface CaseIdentity {
  eval: string;
  test: string;
  prompt: string;
  target: string;
  sample: number;
}

export type Outcome = 'passed' | 'failed' | 'error' | 'canceled';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export const zeroUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

export const addUsage = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  costUsd: a.costUsd + b.costUsd,
});

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

/** A JSON value: what a run context, a journal entry and a bundle row are made of. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A plain mapping (what JSON, YAML and TOML objects parse to), as opposed to an array or a scalar. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
