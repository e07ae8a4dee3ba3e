/**
 * A JSONPath subset for picking fields out of responses: `$`, `.name`, `['name']`, `[N]` (negative from the
 * end). Deterministic and safe in shared configs, unlike evaluating a JavaScript expression.
 */
const step = /\.([A-Za-z_$][\w$-]*)|\[(-?\d+)\]|\[['"]([^'"]*)['"]\]/y;

/** The path split into keys and indexes; throws on a path outside the subset. */
export const parsePath = (path: string): (string | number)[] => {
  if (!path.startsWith('$')) throw new Error(`a selector starts with "$", e.g. $.output.text (got "${path}")`);
  const parts: (string | number)[] = [];
  step.lastIndex = 1;
  while (step.lastIndex < path.length) {
    const at = step.lastIndex;
    const m = step.exec(path);
    if (!m) throw new Error(`cannot read "${path}" at column ${at + 1}: use .name, [N] or ['name']`);
    parts.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : (m[3] as string)));
  }
  return parts;
};

/** The value at `parts` in `value`, or undefined when any step is missing. */
export const selectPath = (value: unknown, parts: readonly (string | number)[]): unknown => {
  let current = value;
  for (const part of parts) {
    if (typeof part === 'number') {
      if (!Array.isArray(current)) return undefined;
      current = current[part < 0 ? current.length + part : part];
    } else {
      if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
      current = (current as Record<string, unknown>)[part];
    }
  }
  return current;
};
