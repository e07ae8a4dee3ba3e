import { z } from 'zod';
import { assertionCommonSchema, assertionConfigSchema, parseAssertionType } from '../graders/assertion.js';
import type { GraderDef } from '../graders/grader.js';
import { jsonEqual } from '../graders/json-equal.js';
import { type GraderKind, graderKinds, graders } from '../graders/registry.js';
import type { ConfigReferences, JsonObject } from '../records.js';
import { isRecord } from '../records.js';
import { existingFile } from './files.js';
import type { Path, Source } from './source.js';
import type { AssertionSpec } from './spec.js';
import { nearest } from './suggest.js';
import { isJsonObject } from './test-shape.js';
import { objectSchema } from './zod-walk.js';

const commonKeys = Object.keys(assertionCommonSchema.shape);
const jsonObject = z.record(z.string(), z.json());
/** `weight` and `required` of an assertion that sets neither, as the schema defaults them. */
const commonDefaults = assertionCommonSchema.parse({ type: 'contains' });

/** The keys an assertion of `kind` may have, worked out once per kind rather than per assertion. */
const allowedKeys = new Map<GraderKind, readonly string[] | undefined>();
const keysOf = (kind: GraderKind): readonly string[] | undefined => {
  if (!allowedKeys.has(kind)) {
    const shape = objectSchema(assertionConfigSchema(kind))?.shape;
    allowedKeys.set(kind, shape ? [...commonKeys, ...Object.keys(shape)] : undefined);
  }
  return allowedKeys.get(kind);
};

/** The common keys as the schema takes them; without zod when only `type` is set, as in most assertions. */
const commonOf = (source: Source, path: Path, common: Record<string, unknown>) => {
  let only = true;
  for (const key in common) only &&= key === 'type';
  if (only) return { ...commonDefaults, type: common.type as string };
  const parsed = assertionCommonSchema.safeParse(common);
  if (!parsed.success) throw source.zodError(parsed.error, path, assertionCommonSchema);
  return parsed.data;
};

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
  const { common, config } = splitKeys(raw);
  const allowed = keysOf(parsedType.kind);
  if (allowed) {
    const unknown = source.unknownKey(path, raw, allowed);
    if (unknown) throw unknown;
  }
  const commonParsed = commonOf(source, path, common);
  const configParsed = schema.safeParse(config);
  if (!configParsed.success) throw source.zodError(configParsed.error, path, schema);
  if (!isJsonObject(config)) {
    const json = jsonObject.safeParse(config);
    if (!json.success) throw source.zodError(json.error, path, schema);
  }

  // Widened, as the engine does: each registry entry is a GraderDef, and one call site serves every kind.
  const def: GraderDef = graders[parsedType.kind];
  const references = def.references?.(configParsed.data);
  for (const file of references?.files ?? []) {
    const key = Object.keys(config).find((k) => typeof config[k] === 'string' && config[k].endsWith(file));
    existingFile(source, key === undefined ? path : [...path, key], file, baseDir);
  }

  return toSpec(source, path, parsedType, commonParsed, config as JsonObject, def, references);
};

/** An assertion's common keys (weight, required, …) and its kind's own (its config). */
const splitKeys = (raw: Record<string, unknown>) => {
  const common: Record<string, unknown> = {};
  const config: Record<string, unknown> = {};
  for (const key in raw) (commonKeys.includes(key) ? common : config)[key] = raw[key];
  return { common, config };
};

const toSpec = (
  source: Source,
  path: Path,
  parsedType: { kind: GraderKind; negate: boolean },
  { weight, required, id, threshold }: ReturnType<typeof commonOf>,
  config: JsonObject,
  def: GraderDef,
  references: ConfigReferences | undefined,
): AssertionSpec => {
  const hasReferences = Boolean(references?.files?.length || references?.commands?.length);
  // Most assertions have none of the optional keys: a plain literal takes 64 bytes, the spreads below 96, and a
  // 100,000-test plan holds every assertion. Same keys in the same order either way, sorted: a test's fingerprint
  // serialises its assertions with sorted keys (stableJson), which then has none to sort.
  if (id === undefined && threshold === undefined && !hasReferences && !def.judged) {
    return { config, negate: parsedType.negate, required, type: parsedType.kind, weight };
  }
  return {
    config,
    ...(id !== undefined ? { id } : {}),
    negate: parsedType.negate,
    ...(hasReferences ? { references } : {}),
    required,
    ...(threshold !== undefined ? { threshold } : {}),
    type: parsedType.kind,
    weight,
    ...(def.judged ? { where: source.pos(path) } : {}),
  };
};

/**
 * An assertion buildAssertion took before, read again from the same unchanged text (a JSONL test read back): split
 * and defaulted the same way, without checking again what was checked then. Its config is parsed only when its
 * grader names files, which are found from the parsed config.
 */
export const restoreAssertion = (source: Source, path: Path, raw: Record<string, unknown>): AssertionSpec => {
  const parsedType = parseAssertionType(raw.type as string) as { kind: GraderKind; negate: boolean };
  const { common, config } = splitKeys(raw);
  const def: GraderDef = graders[parsedType.kind];
  const references = def.references?.(assertionConfigSchema(parsedType.kind).parse(config));
  return toSpec(source, path, parsedType, commonOf(source, path, common), config as JsonObject, def, references);
};

/** Builds the assertions of one file's tests, whose files resolve against `baseDir`. */
export type AssertionBuilder = (source: Source, path: Path, raw: unknown) => AssertionSpec;

/**
 * buildAssertion for the many tests of one file: an assertion written like one of the last few met (a CSV
 * column's check, a suite-wide `is-json`) shares that one's spec, so it is validated once and held once. Only
 * the last few are compared, without serialising anything: a file may have as many distinct assertions as
 * tests. A judged assertion keeps where it was written (its judge's errors point there), so it is never shared.
 */
export const assertionBuilder = (baseDir: string): AssertionBuilder => {
  const recent: { raw: unknown; type: unknown; spec: AssertionSpec }[] = [];
  return (source, path, raw) => {
    // Equal to a value that passed: the same assertion, its values JSON as that one's were. The one met goes
    // first again, so a check every test has stays among the few kept beside each test's own. Its type is
    // compared first: a test's own assertions differ from the last test's, mostly of another type.
    const type = isRecord(raw) ? raw.type : undefined;
    const at = recent.findIndex((r) => r.type === type && jsonEqual(raw, r.raw));
    const hit = recent[at];
    if (hit) {
      recent.splice(at, 1);
      recent.unshift(hit);
      return hit.spec;
    }
    const spec = buildAssertion(source, path, raw, baseDir);
    if (spec.where === undefined) {
      recent.unshift({ raw, type, spec });
      if (recent.length > sharedAssertions) recent.pop();
    }
    return spec;
  };
};

const sharedAssertions = 4;
