/**
 * JSON with object keys sorted, so two equal values serialise the same whatever order they were written in.
 * Written straight to one string, without sorted copies or lists of parts: a plan serialises every test's vars
 * and assertions, and building sorted copies first doubled the cost of planning a large suite.
 */
export const stableJson = (value: unknown): string =>
  // Most values are written in key order already: JSON.stringify then writes the same text in one native pass.
  inKeyOrder(value) ? (JSON.stringify(value) ?? 'null') : sortedJson(value);

const sortedJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i ? ',' : ''}${sortedJson(value[i])}`;
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of sortedKeys(record)) {
    const item = record[key];
    if (item !== undefined) out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${sortedJson(item)}`;
  }
  return `${out}}`;
};

/**
 * True when JSON.stringify writes `value` exactly as sortedJson does: every object a plain one (no toJSON, no
 * class) with its own keys in sorted order, which is the order JSON.stringify writes them in; no functions or
 * symbols, which sortedJson writes as null where JSON.stringify drops them.
 */
const inKeyOrder = (value: unknown): boolean => {
  if (value === null) return true;
  const type = typeof value;
  if (type === 'function' || type === 'symbol') return false;
  if (type !== 'object') return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!inKeyOrder(value[i])) return false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  const record = value as Record<string, unknown>;
  let previous: string | undefined;
  for (const key in record) {
    if (previous !== undefined && previous > key) return false;
    previous = key;
    if (!inKeyOrder(record[key])) return false;
  }
  return true;
};

/** The keys in sorted order; most objects are written in it already, and those need no sort. */
const sortedKeys = (record: Record<string, unknown>): string[] => {
  const keys = Object.keys(record);
  for (let i = 1; i < keys.length; i++) if ((keys[i - 1] as string) > (keys[i] as string)) return keys.sort();
  return keys;
};
