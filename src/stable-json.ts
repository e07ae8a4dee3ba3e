/**
 * JSON with object keys sorted, so two equal values serialise the same whatever order they were written in.
 * Written straight to one string, without sorted copies or lists of parts: a plan serialises every test's vars
 * and assertions, and building sorted copies first doubled the cost of planning a large suite.
 */
export const stableJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i ? ',' : ''}${stableJson(value[i])}`;
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of sortedKeys(record)) {
    const item = record[key];
    if (item !== undefined) out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${stableJson(item)}`;
  }
  return `${out}}`;
};

/** The keys in sorted order; most objects are written in it already, and those need no sort. */
const sortedKeys = (record: Record<string, unknown>): string[] => {
  const keys = Object.keys(record);
  for (let i = 1; i < keys.length; i++) if ((keys[i - 1] as string) > (keys[i] as string)) return keys.sort();
  return keys;
};
