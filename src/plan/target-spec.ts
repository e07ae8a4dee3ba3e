import { z } from 'zod';
import type { JsonObject } from '../records.js';
import { targets } from '../targets/registry.js';
import { type Env, validationCopy } from './env.js';
import { parsedOnce } from './parse-once.js';
import type { Path, Source } from './source.js';
import { didYouMean } from './suggest.js';
import { objectSchema } from './zod-walk.js';

/** Keys of a target declaration that are Proctor's, not the kind's config. */
const ownKeys = ['kind', 'max_concurrency'] as const;

const targetKinds = (): string[] => Object.keys(targets);

const jsonObject = z.record(z.string(), z.json());

/**
 * Validates one target declaration (`[targets.NAME]` or an inline eval target) and returns its spec with the
 * config RAW: `${SECRET}` stays a reference so no secret is ever written to a bundle or the store.
 * `extraKeys` are further keys the caller owns (an inline target's `label`).
 */
export const buildTarget = (
  source: Source,
  path: Path,
  label: string,
  declared: Record<string, unknown>,
  baseDir: string,
  env: Env,
  extraKeys: readonly string[] = [],
): { label: string; kind: string; config: JsonObject; maxConcurrency?: number; baseDir: string } => {
  const kinds = targetKinds();
  const kind = declared.kind;
  if (kind === undefined) {
    throw source.fail(path, `target "${label}" has no kind`, `add kind = "${kinds[0]}" (one of: ${kinds.join(', ')})`);
  }
  if (typeof kind !== 'string' || !Object.hasOwn(targets, kind)) {
    throw source.fail(
      [...path, 'kind'],
      `unknown target kind ${JSON.stringify(kind)}`,
      didYouMean(String(kind), kinds, 'kinds'),
    );
  }
  const maxConcurrency = declared.max_concurrency;
  if (maxConcurrency !== undefined && !(Number.isInteger(maxConcurrency) && Number(maxConcurrency) > 0)) {
    throw source.fail(
      [...path, 'max_concurrency'],
      `max_concurrency of target "${label}" must be a positive integer`,
      'write e.g. max_concurrency = 4',
    );
  }
  const config: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(declared)) {
    if (!(ownKeys as readonly string[]).includes(key) && !extraKeys.includes(key)) config[key] = value;
  }
  const schema = targets[kind as keyof typeof targets].config() as z.ZodType;
  const shape = objectSchema(schema)?.shape;
  if (shape) {
    const unknown = source.unknownKey(path, config, [...ownKeys, ...extraKeys, ...Object.keys(shape)]);
    if (unknown) throw unknown;
  }
  const json = jsonObject.safeParse(config, parsedOnce);
  if (!json.success) throw source.zodError(json.error, path, schema);
  const checked = schema.safeParse(validationCopy(config, env), parsedOnce);
  if (!checked.success) throw source.zodError(checked.error, path, schema);
  return {
    label,
    kind,
    config: json.data as JsonObject,
    ...(maxConcurrency !== undefined ? { maxConcurrency: Number(maxConcurrency) } : {}),
    baseDir,
  };
};
