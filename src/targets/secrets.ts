import { InputError, ProctorError } from '../errors.js';
import { type TargetKind, targets } from './registry.js';

export const redacted = '[redacted]';

/**
 * The config with every secret key's value replaced (by `replace`, default `[redacted]`), for fingerprints and
 * anything written to disk. An object-valued secret (headers) keeps its keys, each value replaced on its own.
 */
export const redactTargetConfig = <C extends Record<string, unknown>>(
  kind: TargetKind,
  config: C,
  replace: (value: unknown) => string = () => redacted,
): C => {
  const def = targets[kind];
  // An unknown kind must fail loudly: silently returning the config would write its secrets to disk.
  if (!def) throw new ProctorError('internal', `unknown target kind "${String(kind)}"`);
  const keys = 'secretKeys' in def ? def.secretKeys : undefined;
  if (!keys || keys.length === 0) return config;
  const out: Record<string, unknown> = { ...config };
  for (const key of keys) {
    const value = out[key];
    if (value === undefined) continue;
    out[key] =
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replace(v)]))
        : replace(value);
  }
  return out as C;
};

/**
 * The values a config holds literally at its kind's secret keys (a header's value included). A `${VAR}` there
 * is not one: the variable's value is, and is found from the environment where the run executes.
 */
export const literalSecrets = (kind: string, config: Readonly<Record<string, unknown>>): string[] => {
  const def = targets[kind as TargetKind];
  const keys = (def && 'secretKeys' in def ? def.secretKeys : undefined) ?? [];
  return keys
    .flatMap((key) => {
      const value = config[key];
      return typeof value === 'object' && value !== null ? Object.values(value) : [value];
    })
    .filter((v): v is string => typeof v === 'string' && !v.includes('${'));
};

const reference = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

const interpolateString = (s: string, env: Readonly<Record<string, string | undefined>>, at: string): string => {
  if (!s.includes('${')) return s;
  return s.replace(reference, (whole, escaped: string, name: string, fallback: string | undefined) => {
    // `$${NAME}` is a literal `${NAME}`: a cli target's shell command can then use its own variables.
    if (escaped) return whole.slice(1);
    const value = env[name];
    // As in the shell, `:-` also applies to a variable that is set but empty.
    if (value !== undefined && (value !== '' || fallback === undefined)) return value;
    if (fallback !== undefined) return fallback;
    throw new InputError(
      `environment variable ${name} is not set (referenced as \${${name}}${at ? ` at ${at}` : ''})`,
      undefined,
      `export ${name}=…, or write \${${name}:-default}`,
    );
  });
};

/**
 * Replace `${NAME}` and `${NAME:-default}` in every string of a JSON-like value (keys are left alone).
 * Throws an InputError naming the variable and where it was used when it is unset and has no default.
 */
export const interpolateEnv = <T>(value: T, env: Readonly<Record<string, string | undefined>>, at = ''): T => {
  if (typeof value === 'string') return interpolateString(value, env, at) as T;
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, env, `${at}[${i}]`)) as T;
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateEnv(v, env, at ? `${at}.${k}` : k);
    return out as T;
  }
  return value;
};
