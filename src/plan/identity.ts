import { createHash } from 'node:crypto';
import type { CaseIdentity } from '../records.js';

const hash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 20);

/**
 * The stable key of a case. Field order is fixed here, not taken from the object, so the same identity
 * hashes the same in every process and every version that keeps this function.
 */
export const caseKey = (id: CaseIdentity): string =>
  hash(JSON.stringify([id.eval, id.test, id.prompt, id.target, id.sample]));

/**
 * JSON with object keys sorted, so two equal values serialise the same whatever order they were written in.
 * Written straight to a string: building sorted copies first doubled the cost of planning a large suite.
 */
export const stableJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    if (record[key] !== undefined) parts.push(`${JSON.stringify(key)}:${stableJson(record[key])}`);
  }
  return `{${parts.join(',')}}`;
};

/** A hash of everything that decides a case's result; secrets must already be redacted from `parts`. */
export const fingerprintOf = (parts: unknown): string => hash(stableJson(parts));
