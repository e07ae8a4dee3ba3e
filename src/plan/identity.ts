import { createHash } from 'node:crypto';
import type { CaseIdentity } from '../records.js';

const hash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 20);

/**
 * The stable key of a case. Field order is fixed here, not taken from the object, so the same identity
 * hashes the same in every process and every version that keeps this function.
 */
export const caseKey = (id: CaseIdentity): string =>
  hash(JSON.stringify([id.eval, id.test, id.prompt, id.target, id.sample]));

/** Sorts object keys so two equal values serialise the same whatever order they were written in. */
const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
};

/** A hash of everything that decides a case's result; secrets must already be redacted from `parts`. */
export const fingerprintOf = (parts: unknown): string => hash(JSON.stringify(canonical(parts)));
