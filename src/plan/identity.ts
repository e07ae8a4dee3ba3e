import { hash as digest } from 'node:crypto';
import type { CaseIdentity } from '../records.js';
import { stableJson } from '../stable-json.js';

// The first 10 bytes of the digest as 20 hex characters. `.slice` alone would keep a sliced string alive with its
// 64-character parent, held twice (key and fingerprint) by every case of a plan; reading the slice back as a JSON
// string makes a flat copy, and this way (hex digest, slice, copy) costs about half of a Buffer digest turned to
// hex: a plan hashes three times per case.
const hash = (text: string): string => JSON.parse(`"${digest('sha256', text, 'hex').slice(0, 20)}"`) as string;

/**
 * The stable key of a case. Field order is fixed here, not taken from the object, so the same identity
 * hashes the same in every process and every version that keeps this function.
 */
export const caseKey = (id: CaseIdentity): string =>
  hash(JSON.stringify([id.eval, id.test, id.prompt, id.target, id.sample]));

/** A hash of everything that decides a case's result; secrets must already be redacted from `parts`. */
export const fingerprintOf = (parts: unknown): string => hash(stableJson(parts));
