import type { InputError } from '../../errors.js';
import type { Path, Source } from '../source.js';

/**
 * A promptfoo key Proctor does not run, refused up front (exit 2) rather than ignored: a silently dropped
 * `transform` or `provider` would grade something other than what the user wrote.
 */
export const refuseKey = (source: Source, at: Path, key: string, instead: string): InputError =>
  source.fail([...at, key], `promptfoo key "${key}" is not supported by Proctor`, instead, 'key');

/** What to do instead of each refused key that several real configs use; others get a generic hint. */
export type Instead = Readonly<Record<string, string>>;

/** Refuses the first key of `object` that is not `allowed`, with its own hint when `instead` has one. */
export const checkKeys = (
  source: Source,
  at: Path,
  object: Record<string, unknown>,
  allowed: readonly string[],
  instead: Instead = {},
): void => {
  const key = Object.keys(object).find((k) => !allowed.includes(k));
  if (key === undefined) return;
  throw refuseKey(
    source,
    at,
    key,
    instead[key] ?? `remove it; Proctor reads ${allowed.map((k) => `\`${k}\``).join(', ')} here`,
  );
};
