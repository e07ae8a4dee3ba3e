import { hash as digest } from 'node:crypto';
import type { CaseIdentity } from '../records.js';
import { stableJson } from '../stable-json.js';

// The first 10 bytes, hex-encoded straight to a 20-character string: `.slice` of the full hex would keep a sliced
// string alive with its 64-character parent, held twice (key and fingerprint) by every case of a plan. The
// one-shot digest makes no Hash object: a plan hashes three times per case.
const hash = (text: string): string => digest('sha256', text, 'buffer').toString('hex', 0, 10);

/**
 * The stable key of a case. Field order is fixed here, not taken from the object, so the same identity
 * hashes the same in every process and every version that keeps this function.
 */
export const caseKey = (id: CaseIdentity): string =>
  hash(JSON.stringify([id.eval, id.test, id.prompt, id.target, id.sample]));

/** A hash of everything that decides a case's result; secrets must already be redacted from `parts`. */
export const fingerprintOf = (parts: unknown): string => hash(stableJson(parts));
