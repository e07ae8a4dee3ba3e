import { createRequire } from 'node:module';
import { messageOf } from './text.js';

// Only the part of ajv@8 that Proctor calls, declared here and required on first use: loading ajv takes a few
// hundred milliseconds cold, which every command and queue worker would pay even when no eval has a schema.
interface AjvError {
  instancePath: string;
  message?: string;
}
interface AjvValidateFunction {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}
interface Ajv {
  compile(schema: object): AjvValidateFunction;
  errorsText(errors?: AjvError[] | null, options?: { dataVar?: string; separator?: string }): string;
}
type AjvConstructor = new (options: Record<string, unknown>) => Ajv;

/** Checks a value against a compiled schema: undefined when it is valid, else what is wrong. */
export type SchemaCheck = (data: unknown) => string | undefined;

const require = createRequire(import.meta.url);

// Ajv's default class speaks draft-07 (and 06); the newer drafts each need their own class.
const dialectModule = (schema: Record<string, unknown>): string => {
  const uri = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (uri.includes('2020-12')) return 'ajv/dist/2020';
  if (uri.includes('2019-09')) return 'ajv/dist/2019';
  return 'ajv';
};

const instances = new Map<string, Ajv>();
const checks = new Map<string, SchemaCheck>();

const ajvFor = (id: string): Ajv => {
  const cached = instances.get(id);
  if (cached) return cached;
  let loaded: unknown;
  try {
    loaded = require(id);
  } catch (error) {
    throw new Error(`JSON Schema validation needs the ajv@8 package (${id}): ${messageOf(error)}`);
  }
  const mod = loaded as { default?: AjvConstructor } & AjvConstructor;
  const Ctor = mod.default ?? mod;
  const ajv = new Ctor({
    allErrors: true,
    // Users' schemas carry annotations and custom keywords; rejecting them would fail evals for no gain.
    strict: false,
    // Formats need ajv-formats; without it ajv would reject every schema using `format`, so formats are annotations.
    validateFormats: false,
    // Two assertions may share a schema `$id`; registering it would make the second compile throw.
    addUsedSchema: false,
  });
  instances.set(id, ajv);
  return ajv;
};

/**
 * Compiles a JSON Schema once per distinct schema (graders are created per assertion, often for the same schema).
 * Throws a plain Error when ajv is missing or the schema is invalid: config validation reports it as an issue.
 */
export const compileJsonSchema = (schema: Record<string, unknown>): SchemaCheck => {
  const key = JSON.stringify(schema);
  const cached = checks.get(key);
  if (cached) return cached;
  const ajv = ajvFor(dialectModule(schema));
  const validate = ajv.compile(schema);
  const check: SchemaCheck = (data) =>
    validate(data) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'output', separator: '; ' });
  checks.set(key, check);
  return check;
};
