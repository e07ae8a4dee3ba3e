import { z } from 'zod';
import { assertionCommonSchema, assertionConfigSchema, parseAssertionType } from '../graders/assertion.js';
import type { GraderDef } from '../graders/grader.js';
import { graderKinds, graders } from '../graders/registry.js';
import type { JsonObject } from '../records.js';
import { isRecord } from '../records.js';
import { existingFile } from './files.js';
import type { Path, Source } from './source.js';
import type { AssertionSpec } from './spec.js';
import { nearest } from './suggest.js';
import { objectSchema } from './zod-walk.js';

const commonKeys = Object.keys(assertionCommonSchema.shape);
const jsonObject = z.record(z.string(), z.json());

const unknownTypeHint = (type: string): string => {
  const negated = type.startsWith('not-');
  const guess = nearest(negated ? type.slice(4) : type, graderKinds);
  const known = `Known types: ${graderKinds.join(', ')} (prefix any with "not-" to negate it)`;
  return guess ? `did you mean "${negated ? 'not-' : ''}${guess}"? ${known}` : known;
};

/**
 * Validates one assertion (`type`, the common keys, then the kind's own keys) and splits it the way the
 * engine's resolveAssertion expects. `config` is kept as written: the engine parses it again when it creates
 * the grader, and a parsed value (a transform's output) might not be JSON. Files the grader names must exist
 * under `baseDir` (the eval file's directory, where the engine resolves them), so none is missing at run time.
 */
export const buildAssertion = (source: Source, path: Path, raw: unknown, baseDir: string): AssertionSpec => {
  if (!isRecord(raw)) {
    throw source.fail(
      path,
      'an assertion must be a mapping',
      'write it as `- type: contains` with its keys below, e.g. `value: hello`',
    );
  }
  const type = raw.type;
  if (type === undefined) throw source.fail(path, 'assertion has no type', `add \`type:\`. ${unknownTypeHint('')}`);
  if (typeof type !== 'string')
    throw source.fail([...path, 'type'], 'assertion type must be a string', unknownTypeHint(''));
  const parsedType = parseAssertionType(type);
  if (!parsedType) throw source.fail([...path, 'type'], `unknown assertion type "${type}"`, unknownTypeHint(type));

  const schema = assertionConfigSchema(parsedType.kind);
  const common: Record<string, unknown> = {};
  const config: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) (commonKeys.includes(key) ? common : config)[key] = value;
  const shape = objectSchema(schema)?.shape;
  if (shape) {
    const unknown = source.unknownKey(path, raw, [...commonKeys, ...Object.keys(shape)]);
    if (unknown) throw unknown;
  }
  const commonParsed = assertionCommonSchema.safeParse(common);
  if (!commonParsed.success) throw source.zodError(commonParsed.error, path, assertionCommonSchema);
  const configParsed = schema.safeParse(config);
  if (!configParsed.success) throw source.zodError(configParsed.error, path, schema);
  const json = jsonObject.safeParse(config);
  if (!json.success) throw source.zodError(json.error, path, schema);

  // Widened, as the engine does: each registry entry is a GraderDef, and one call site serves every kind.
  const def: GraderDef = graders[parsedType.kind];
  const references = def.references?.(configParsed.data);
  for (const file of references?.files ?? []) {
    const key = Object.keys(config).find((k) => typeof config[k] === 'string' && config[k].endsWith(file));
    existingFile(source, key === undefined ? path : [...path, key], file, baseDir);
  }

  const { weight, required, id, threshold } = commonParsed.data;
  const hasReferences = Boolean(references?.files?.length || references?.commands?.length);
  // Most assertions have none of the optional keys: a plain literal takes 64 bytes, the spreads below 96, and a
  // 100,000-test plan holds every assertion. Same keys in the same order either way.
  if (id === undefined && threshold === undefined && !hasReferences && !def.judged) {
    return { type: parsedType.kind, negate: parsedType.negate, weight, required, config: json.data as JsonObject };
  }
  return {
    type: parsedType.kind,
    negate: parsedType.negate,
    weight,
    required,
    ...(id !== undefined ? { id } : {}),
    ...(threshold !== undefined ? { threshold } : {}),
    config: json.data as JsonObject,
    ...(hasReferences ? { references } : {}),
    ...(def.judged ? { where: source.pos(path) } : {}),
  };
};
