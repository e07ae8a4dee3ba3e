/** A plain mapping (what YAML, TOML and JSON objects parse to), as opposed to an array or a scalar. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
