/**
 * JSON with object keys sorted, so two equal values serialise the same whatever order they were written in.
 * Most values are written in key order already, and the others are copied in key order where they are not (only
 * there), so JSON.stringify writes the text in one native pass: a plan serialises every test's vars and assertions,
 * and writing an object's keys one by one here took twice as long as a copy of it and one pass.
 */
export const stableJson = (value: unknown): string => {
  const copy = ordered(value);
  return copy === unorderable ? sortedJson(value) : (JSON.stringify(copy) ?? 'null');
};

/** What `ordered` gives for a value JSON.stringify cannot be handed in key order (see there). */
const unorderable = Symbol('unorderable');

/** An array index as a key: JSON.stringify writes those first, in numeric order, whatever order they were set in. */
const indexKey = /^(?:0|[1-9]\d*)$/;

/**
 * `value` as JSON.stringify must see it to write sortedJson's text: itself where it is already (primitives, plain
 * objects with their keys in sorted order), else a copy. In a copy an object's keys are set in sorted order; a
 * function or symbol is null, as in an array (JSON.stringify would drop it from an object); an object that is not
 * plain (a class, a toJSON) is its own enumerable keys, as sortedJson writes it. `unorderable` when an object has an
 * index key, which no copy keeps in sorted order, or a `__proto__` key, which a copy cannot set as its own.
 */
const ordered = (value: unknown): unknown => {
  if (value === null) return null;
  const type = typeof value;
  if (type === 'function' || type === 'symbol') return null;
  if (type !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = ordered(item);
      if (next === item) continue;
      if (next === unorderable) return unorderable;
      out ??= value.slice();
      out[i] = next;
    }
    return out ?? value;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  const proto: unknown = Object.getPrototypeOf(value);
  let changed = proto !== Object.prototype && proto !== null;
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (i > 0 && (keys[i - 1] as string) > key) sorted = false;
    if (key === '__proto__' || indexKey.test(key)) return unorderable;
  }
  if (!sorted) {
    keys.sort();
    changed = true;
  }
  const values: unknown[] = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const item = record[keys[i] as string];
    const next = ordered(item);
    if (next === unorderable) return unorderable;
    values[i] = next;
    if (next !== item) changed = true;
  }
  if (!changed) return value;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) out[keys[i] as string] = values[i];
  return out;
};

/** stableJson's text written key by key: for a value with an object `ordered` cannot copy in key order. */
const sortedJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i ? ',' : ''}${sortedJson(value[i])}`;
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item !== undefined) out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${sortedJson(item)}`;
  }
  return `${out}}`;
};
