import { InputError } from '../errors.js';
import { interpolateEnv } from '../targets/secrets.js';
import type { Path, Source } from './source.js';

/** The environment `${VAR}` references resolve against. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Interpolates one config value that is not a target's (store url, runner settings): an unset variable is an
 * error at the value's position, since nothing can run without it.
 */
export const interpolateAt = <T>(source: Source, path: Path, value: T, env: Env): T => {
  try {
    return interpolateEnv(value, env);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    throw new InputError(error.message, source.pos(path), error.hint);
  }
};

/**
 * A throwaway interpolated copy of a target config, only to validate it. A reference to an unset variable is
 * left as written: the secret may exist only where the target runs (a queue worker), and the engine reports
 * it there; `${VAR}` as a string still passes a string field.
 */
export const validationCopy = (value: unknown, env: Env): unknown => {
  if (typeof value === 'string') {
    try {
      return interpolateEnv(value, env);
    } catch (error) {
      if (error instanceof InputError) return value;
      throw error;
    }
  }
  if (Array.isArray(value)) return value.map((v) => validationCopy(v, env));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, validationCopy(v, env)]));
  }
  return value;
};
