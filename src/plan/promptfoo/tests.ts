import { readFileSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../../errors.js';
import type { JsonObject } from '../../records.js';
import { isRecord } from '../../records.js';
import { readCsvTable } from '../csv-table.js';
import { displayPath, existingFile, isFileRef } from '../files.js';
import { globFiles, isGlob } from '../glob.js';
import { type Path, PointSource, type Source } from '../source.js';
import { YamlSource } from '../yaml-source.js';
import { type AssertionScope, expectedAssertion, translateAssertion } from './assertions.js';
import { checkKeys } from './refuse.js';
import type { Origin } from './translated-source.js';
import { loadVars } from './vars.js';

/** A promptfoo test read from wherever it was written, its assertions already native. */
export interface ReadTest {
  description?: string;
  vars: JsonObject;
  assert: JsonObject[];
  threshold?: number;
  metadata?: JsonObject;
  /** The test's node, and the node of each assertion when it lives elsewhere (a CSV cell). */
  origin: Origin;
  assertOrigins?: Origin[];
}

/** How one test's surroundings translate: its directory and its judge (`options.provider`, else the default's). */
export interface TestScope {
  dir: string;
  root: string;
  /** The label of the judge target the translated eval declares under `judges:`. */
  judge: (source: Source, at: Path, provider: unknown) => string;
}

/** An assertion's judge: its own `provider`, else its test's `options.provider` (at `providerAt`), else the default. */
const assertionScope = (source: Source, scope: TestScope, provider: unknown, providerAt: Path): AssertionScope => ({
  dir: scope.dir,
  judge: (at, own) =>
    own !== undefined
      ? scope.judge(source, at, own)
      : provider !== undefined
        ? scope.judge(source, providerAt, provider)
        : scope.judge(source, at, undefined),
});

/** `options:` of a test or of defaultTest: only the judge (`provider`) has a meaning in Proctor. */
export const readOptions = (source: Source, at: Path, raw: unknown): unknown => {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) throw source.fail(at, 'options must be a mapping', 'write `options: {provider: …}`');
  checkKeys(source, at, raw, ['provider'], {
    transform: 'transform the output inside a `javascript` assertion instead',
    postprocess: 'transform the output inside a `javascript` assertion instead',
    rubricPrompt: 'put the whole rubric into the assertion’s `value`',
  });
  return raw.provider;
};

const readMetadata = (source: Source, at: Path, raw: unknown): JsonObject | undefined => {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) throw source.fail(at, 'metadata must be a mapping', 'write `metadata: {key: value}`');
  return raw as JsonObject;
};

const readThreshold = (source: Source, at: Path, raw: unknown): number | undefined => {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'number' || raw < 0 || raw > 1)
    throw source.fail(at, 'threshold must be a number from 0 to 1', 'write e.g. `threshold: 0.8`');
  return raw;
};

/** One test mapping, inline or from a YAML/JSON file. */
export const readTest = (source: Source, at: Path, raw: unknown, scope: TestScope): ReadTest => {
  if (!isRecord(raw)) throw source.fail(at, 'a test must be a mapping', 'write `- vars: {…}` with `assert: […]`');
  checkKeys(source, at, raw, ['description', 'vars', 'assert', 'threshold', 'options', 'metadata'], {
    provider: 'put the provider into `providers:` of a config of its own',
    providers: 'put these providers into `providers:` of a config of their own',
    prompts: 'put these prompts into `prompts:` of a config of their own',
    assertScoringFunction: 'weigh assertions with `weight:`, or combine them in one `javascript` assertion',
  });
  if (raw.description !== undefined && typeof raw.description !== 'string')
    throw source.fail([...at, 'description'], 'description must be text', 'write `description: "…"`');
  if (raw.assert !== undefined && !Array.isArray(raw.assert))
    throw source.fail([...at, 'assert'], 'assert must be a list', 'write `assert: [{type: contains, value: …}]`');
  const optionsAt = [...at, 'options'];
  const assertions = assertionScope(source, scope, readOptions(source, optionsAt, raw.options), [
    ...optionsAt,
    'provider',
  ]);
  const metadata = readMetadata(source, [...at, 'metadata'], raw.metadata);
  const threshold = readThreshold(source, [...at, 'threshold'], raw.threshold);
  return {
    ...(raw.description !== undefined ? { description: raw.description } : {}),
    vars: loadVars(source, [...at, 'vars'], raw.vars, scope.dir),
    assert: ((raw.assert ?? []) as unknown[]).map((a, i) =>
      translateAssertion(source, [...at, 'assert', i], a, assertions),
    ),
    ...(threshold !== undefined ? { threshold } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    origin: { source, path: at },
  };
};

/**
 * A CSV file in promptfoo's layout: each column a var, except `__expected` (and `__expected1`…), an
 * assertion in promptfoo's `type:value` shorthand; `__description`; `__threshold` (empty: none);
 * `__metadata:KEY`. Other `__` columns are refused.
 */
const csvTests = (display: string, text: string, scope: TestScope): ReadTest[] => {
  const { names, header, rows } = readCsvTable(display, text);
  names.forEach((name, i) => {
    if (name.startsWith('__') && !/^__(expected\d*|description|threshold|metadata:.+)$/.test(name))
      throw new InputError(
        `promptfoo column "${name}" is not supported by Proctor`,
        { file: display, line: header.line, col: header.cols[i] ?? 1 },
        'Proctor reads __expected, __expected<N>, __description, __threshold and __metadata:KEY columns',
      );
  });
  return rows.map((row) => {
    const cellAt = (i: number) => ({ file: display, line: row.line, col: row.cols[i] ?? 1 });
    const vars: JsonObject = {};
    const metadata: JsonObject = {};
    const assert: JsonObject[] = [];
    const assertOrigins: Origin[] = [];
    let description: string | undefined;
    let threshold: number | undefined;
    row.cells.forEach((cell, i) => {
      const name = names[i] ?? '';
      const point = new PointSource(cell, cellAt(i));
      if (name.startsWith('__expected')) {
        if (cell.trim() === '') return;
        const judge = assertionScope(point, scope, undefined, []);
        assert.push(translateAssertion(point, [], expectedAssertion(cell), judge));
        assertOrigins.push({ source: point, path: [] });
      } else if (name === '__description') description = cell || undefined;
      else if (name === '__threshold') {
        if (cell.trim() === '') return;
        threshold = readThreshold(point, [], Number(cell));
      } else if (name.startsWith('__metadata:')) metadata[name.slice('__metadata:'.length)] = cell;
      else vars[name] = cell;
    });
    const source = new PointSource(vars, { file: display, line: row.line, col: 1 });
    return {
      ...(description !== undefined ? { description } : {}),
      vars: loadVars(source, [], vars, scope.dir),
      assert,
      ...(threshold !== undefined ? { threshold } : {}),
      ...(Object.keys(metadata).length ? { metadata } : {}),
      origin: { source, path: [] },
      assertOrigins,
    };
  });
};

const fileTests = (source: Source, at: Path, file: string, scope: TestScope): ReadTest[] => {
  const display = displayPath(file, scope.root);
  const text = readFileSync(file, 'utf8');
  const ext = path.extname(file).toLowerCase();
  if (ext === '.csv') return csvTests(display, text, scope);
  if (ext === '.jsonl')
    return text.split(/\r?\n/).flatMap((line, i) => {
      if (line.trim() === '') return [];
      const one = YamlSource.parse(display, line, i);
      return [readTest(one, [], one.value, scope)];
    });
  if (ext === '.yaml' || ext === '.yml' || ext === '.json') {
    const tests = YamlSource.parse(display, text);
    const list: unknown = tests.value;
    if (isRecord(list)) return [readTest(tests, [], list, scope)];
    if (!Array.isArray(list))
      throw tests.fail([], 'a tests file must hold a list of tests', 'write one `- vars: …` entry per test');
    return list.map((t, i) => readTest(tests, [i], t, scope));
  }
  throw source.fail(
    at,
    `cannot load tests from "${path.basename(file)}"`,
    'use a .csv, .jsonl, .yaml, .yml or .json file',
  );
};

const fromRef = (source: Source, at: Path, ref: string, scope: TestScope): ReadTest[] => {
  if (!isFileRef(ref))
    throw source.fail(at, `tests entry "${ref}" is neither a test nor a file reference`, `write file://${ref}`);
  const rel = ref.slice('file://'.length);
  const files = isGlob(rel) ? globFiles(rel, scope.dir) : [existingFile(source, at, rel, scope.dir)];
  if (files.length === 0)
    throw source.fail(at, `no file matches ${ref}`, `fix the pattern: it is relative to ${scope.dir}`);
  return files.flatMap((f) => fileTests(source, at, f, scope));
};

/** `tests:` of a promptfoo config: inline tests and `file://` files or globs, in order. */
export const readTests = (source: Source, raw: unknown, scope: TestScope): ReadTest[] => {
  if (raw === undefined) return [];
  const entries: [Path, unknown][] = Array.isArray(raw) ? raw.map((e, i) => [['tests', i], e]) : [[['tests'], raw]];
  return entries.flatMap(([at, entry]) =>
    typeof entry === 'string' ? fromRef(source, at, entry, scope) : [readTest(source, at, entry, scope)],
  );
};
