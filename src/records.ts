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

/**
 * Tokens and cost of one call or a sum of calls. `inputTokens` includes cache reads and writes; `outputTokens`
 * includes reasoning. `costUsd` is null when a billed model has no known price: never a guess.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  costUsd: number | null;
}

export const zeroUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

const addOptional = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);

/** A sum whose cost is unknown (null) as soon as one part's is: a partial total would read as the whole. */
export const addUsage = (a: Usage, b: Usage): Usage => {
  const out: Usage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd === null || b.costUsd === null ? null : a.costUsd + b.costUsd,
  };
  const cacheRead = addOptional(a.cacheReadTokens, b.cacheReadTokens);
  const cacheWrite = addOptional(a.cacheWriteTokens, b.cacheWriteTokens);
  const reasoning = addOptional(a.reasoningTokens, b.reasoningTokens);
  if (cacheRead !== undefined) out.cacheReadTokens = cacheRead;
  if (cacheWrite !== undefined) out.cacheWriteTokens = cacheWrite;
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
};

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

/** A JSON value: what a run context, a journal entry and a bundle row are made of. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/**
 * What a grader's or target's config makes it read besides the case, so the plan can check it before a run and
 * hash it into fingerprints. Paths are as written, relative to the declaring file's directory.
 */
export interface ConfigReferences {
  /** Files the config names (`file://x` as `x`): each must exist when the eval is loaded. */
  files?: readonly string[];
  /** Commands it runs (a shell string or an argv): a project file one of them names is hashed by content. */
  commands?: readonly (string | readonly string[])[];
  /** Where those commands run, relative to the declaring file's directory (default: that directory). */
  cwd?: string;
}

/** A plain mapping (what JSON, YAML and TOML objects parse to), as opposed to an array or a scalar. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
