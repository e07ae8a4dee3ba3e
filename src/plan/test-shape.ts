import type { JsonObject } from '../records.js';

/**
 * A quick look at a test mapping, standing in for its zod parse when the answer is plain yes: a 100,000-test
 * JSONL file spent most of its validation in zod copying every test's vars. It accepts only what `testSchema`
 * accepts, as it is, so its value can be used without a copy; anything else (a step list, a bad value, a key it
 * does not know) is left to zod, whose issues say where and what is wrong.
 */
export const plainTest = (raw: Record<string, unknown>): boolean => {
  for (const key in raw) {
    if (!Object.hasOwn(raw, key)) return false;
    const value = raw[key];
    const ok =
      key === 'id'
        ? (typeof value === 'string' && value !== '') || Number.isSafeInteger(value)
        : key === 'description'
          ? typeof value === 'string'
          : key === 'vars' || key === 'metadata'
            ? isJsonObject(value)
            : key === 'assert'
              ? Array.isArray(value)
              : key === 'threshold'
                ? typeof value === 'number' && value >= 0 && value <= 1
                : key === 'repeat' && Number.isSafeInteger(value) && (value as number) >= 1;
    if (!ok) return false;
  }
  return true;
};

/** A mapping of JSON values as zod's `z.record(z.string(), z.json())` takes them, own keys only. */
export const isJsonObject = (value: unknown): value is JsonObject => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    // zod's record copies by assignment, where `__proto__` means something else.
    if (key === '__proto__' || !Object.hasOwn(record, key) || !isJson(record[key])) return false;
  }
  return true;
};

const isJson = (value: unknown): boolean => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  return isJsonObject(value);
};
