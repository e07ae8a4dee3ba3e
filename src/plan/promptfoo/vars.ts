import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Json, JsonObject } from '../../records.js';
import { existingFile, isFileRef } from '../files.js';
import { globFiles, isGlob } from '../glob.js';
import type { Path, Source } from '../source.js';

const readVarFile = (source: Source, at: Path, file: string): Json => {
  const ext = path.extname(file).toLowerCase();
  if (['.js', '.cjs', '.mjs', '.ts', '.py'].includes(ext))
    throw source.fail(
      at,
      `a var computed by ${path.basename(file)} is not supported`,
      'write the value (or a .txt/.json/.yaml file holding it) into the test',
    );
  const text = readFileSync(file, 'utf8');
  if (ext === '.json') return JSON.parse(text) as Json;
  if (ext === '.yaml' || ext === '.yml') return parseYaml(text) as Json;
  return text;
};

/** A var's value: `file://x` is the file's content (JSON and YAML parsed), a glob the list of its files'. */
const loadVar = (source: Source, at: Path, value: unknown, dir: string): Json => {
  if (typeof value !== 'string' || !isFileRef(value)) return value as Json;
  const rel = value.slice('file://'.length);
  if (!isGlob(rel)) return readVarFile(source, at, existingFile(source, at, rel, dir));
  const files = globFiles(rel, dir);
  if (files.length === 0)
    throw source.fail(at, `no file matches ${value}`, `fix the pattern: it is relative to ${dir}`);
  return files.map((f) => readVarFile(source, at, f));
};

/** Every `file://` var of `vars` (at `at`) loaded. */
export const loadVars = (source: Source, at: Path, vars: unknown, dir: string): JsonObject => {
  if (vars === undefined) return {};
  if (vars === null || typeof vars !== 'object' || Array.isArray(vars))
    throw source.fail(at, 'vars must be a mapping', 'write `vars: {name: value}`');
  const out: JsonObject = {};
  for (const [name, value] of Object.entries(vars)) out[name] = loadVar(source, [...at, name], value, dir);
  return out;
};

const isStringList = (value: Json): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string');

/**
 * promptfoo runs a test once per combination of its array-of-strings vars (arrays of anything else are
 * values); one combination is the vars themselves.
 */
export const combinations = (vars: JsonObject): JsonObject[] => {
  let out: JsonObject[] = [{}];
  for (const [name, value] of Object.entries(vars)) {
    const choices: Json[] = isStringList(value) ? value : [value];
    out = out.flatMap((partial) => choices.map((choice) => ({ ...partial, [name]: choice })));
  }
  return out;
};
