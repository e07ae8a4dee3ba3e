/**
 * Deep equality of JSON values; object key order is ignored because JSON gives it no meaning.
 * Walks without building key lists: the plan compares every test's assertions with the recent ones.
 */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let count = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key)) continue;
    if (!Object.hasOwn(right, key) || !jsonEqual(left[key], right[key])) return false;
    count++;
  }
  for (const key in right) if (Object.hasOwn(right, key) && --count < 0) return false;
  return true;
};
