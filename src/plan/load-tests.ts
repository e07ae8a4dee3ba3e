import path from 'node:path';
import { z } from 'zod';
import type { SourcePosition } from '../errors.js';
import { once } from '../once.js';
import type { JsonObject } from '../records.js';
import { isRecord } from '../records.js';
import { type AssertionBuilder, assertionBuilder, restoreAssertion } from './assertion-spec.js';
import { csvTests } from './csv-tests.js';
import { testSchema } from './eval-schema.js';
import { displayPath, existingFile, isFileRef, readFileRef } from './files.js';
import { HeldTest, type HeldTestSource } from './held-test.js';
import { LineReader } from './line-reader.js';
import { type Path, PointSource, type Source } from './source.js';
import type { AssertionSpec, TestSpec } from './spec.js';
import { checkTestTemplates } from './template-vars.js';
import { plainTest } from './test-shape.js';
import { type AroundSteps, noSteps } from './test-steps.js';
import { textLines } from './text-lines.js';
import { YamlSource } from './yaml-source.js';

/** A test as written, before numbering and `default_test` are applied. */
export interface DraftTest {
  source: Source;
  path: Path;
  id?: string;
  description?: string;
  vars: JsonObject;
  assert: AssertionSpec[];
  threshold?: number;
  repeat?: number;
  metadata?: JsonObject;
  where: SourcePosition;
  before?: unknown[];
  after?: unknown[];
  /** A JSONL file's test: where its line is, so a plan can hold the test by it (held-test.ts). */
  line?: DraftLine;
}

interface DraftLine {
  lines: JsonlLines;
  offset: number;
  bytes: number;
  index: number;
}

export interface TestDefaults {
  vars: JsonObject;
  assert: AssertionSpec[];
  threshold?: number;
  steps?: AroundSteps;
}

/** Compiles a test's own steps after those it inherits (see test-steps.ts). */
export type StepCompiler = (draft: DraftTest, inherited: AroundSteps) => AroundSteps;

/** How an eval finishes each of its tests. */
export interface TestFinish {
  defaults: TestDefaults;
  compileSteps?: StepCompiler;
  /** Vars the command line sets in every test (`--var`), over the test's own. */
  given?: JsonObject;
  /** Sees each finished test, whole: when loaded, and again whenever a held test is read back. */
  visit?: (test: TestSpec) => void;
  /** Sees each test once, whole, as it is loaded. */
  loaded?: (test: TestSpec) => void;
  /** How many more of the plan's JSONL tests are held whole. */
  whole: WholeTests;
}

/**
 * How many of a plan's JSONL tests it holds whole, as loaded, before it holds the rest by their line (held-test.ts).
 * A test held by its line is read, parsed and drafted again when its case is taken: held whole, bench/ab.ts at 5,000
 * cases took 0.926 of the CPU (lower in 7 of 8 pairs), and 2% fewer instructions at 1,000. Held whole, a test keeps
 * 0.6-0.8 KB more of heap (test/plan/plan-memory.test.ts): ~8 MB at most, whatever the plan's size.
 */
export const wholeJsonlTests = 10_000;

/** What is left of a plan's JSONL tests held whole, shared by its eval files. */
export interface WholeTests {
  left: number;
}

/** A plan's count of JSONL tests held whole: `count`, else wholeJsonlTests. */
export const wholeTests = (count = wholeJsonlTests): WholeTests => ({ left: count });

/** Whether the next JSONL test is held whole, counting it against `whole`. */
const holdsWhole = (whole: WholeTests): boolean => {
  if (whole.left <= 0) return false;
  whole.left--;
  return true;
};

const rawTestSchema = once(() => testSchema(z.unknown()));
type RawTest = z.output<ReturnType<typeof rawTestSchema>>;

/** The test mapping as the schema takes it: as it is when plainly valid, else through zod (its errors). */
const validTest = (source: Source, at: Path, raw: unknown): RawTest => {
  if (isRecord(raw) && plainTest(raw)) return raw as RawTest;
  const schema = rawTestSchema();
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw source.zodError(parsed.error, at, schema);
  return parsed.data;
};

/** One inline (or JSONL / YAML file) test mapping, validated; `build` makes its assertions. */
const draftTest = (source: Source, at: Path, raw: unknown, build: AssertionBuilder): DraftTest => {
  const t = validTest(source, at, raw);
  return {
    source,
    path: at,
    ...(t.id !== undefined ? { id: String(t.id) } : {}),
    ...(t.description !== undefined ? { description: t.description } : {}),
    vars: (t.vars ?? {}) as JsonObject,
    assert: (t.assert ?? []).map((a, i) => build(source, [...at, 'assert', i], a)),
    ...(t.threshold !== undefined ? { threshold: t.threshold } : {}),
    ...(t.repeat !== undefined ? { repeat: t.repeat } : {}),
    ...(t.metadata !== undefined ? { metadata: t.metadata as JsonObject } : {}),
    ...(t.before !== undefined ? { before: t.before } : {}),
    ...(t.after !== undefined ? { after: t.after } : {}),
    where: source.pos(at),
  };
};

/**
 * `tests:` of an eval file: inline tests and `file://` references (.csv, .jsonl, .yaml/.yml/.json), in order.
 * Drafted one at a time as they are read, so each is finished (and its parsed JSON let go) before the next.
 */
export function* draftTests(source: Source, raw: unknown, evalDir: string, root: string): Generator<DraftTest> {
  if (raw === undefined) return;
  const entries: [Path, unknown][] = Array.isArray(raw) ? raw.map((e, i) => [['tests', i], e]) : [[['tests'], raw]];
  // Graders' files resolve against the eval file's directory, whichever file the test is in.
  const build = assertionBuilder(evalDir);
  for (const [at, entry] of entries) {
    if (typeof entry === 'string') yield* fromFile(source, at, entry, evalDir, root, build);
    else if (isRecord(entry)) yield draftTest(source, at, entry, build);
    else
      throw source.fail(
        at,
        'a test must be a mapping or a file:// reference',
        'write `- vars: {…}` or `- file://tests.csv`',
      );
  }
}

const fromFile = (
  source: Source,
  at: Path,
  ref: string,
  evalDir: string,
  root: string,
  build: AssertionBuilder,
): Iterable<DraftTest> => {
  if (!isFileRef(ref)) {
    throw source.fail(
      at,
      `tests entry "${ref}" is neither a test nor a file reference`,
      `write file://${ref} to load tests from a file`,
    );
  }
  if (path.extname(ref).toLowerCase() === '.jsonl') {
    const file = existingFile(source, at, ref.slice('file://'.length), evalDir);
    return jsonlTests(displayPath(file, root), file, build);
  }
  const { file, text } = readFileRef(source, at, ref, evalDir);
  const display = displayPath(file, root);
  const ext = path.extname(file).toLowerCase();
  if (ext === '.csv') return csvTests(display, text, evalDir);
  if (ext === '.yaml' || ext === '.yml' || ext === '.json') {
    const tests = YamlSource.parse(display, text);
    if (!Array.isArray(tests.value))
      throw tests.fail([], 'a tests file must hold a list of tests', 'write one `- vars: …` entry per test');
    return tests.value.map((t, i) => draftTest(tests, [i], t, build));
  }
  throw source.fail(
    at,
    `cannot load tests from "${ext || ref}" files`,
    'use a .csv, .jsonl, .yaml, .yml or .json file',
  );
};

/** A JSONL file's tests, read line by line: a 100,000-test file is never one string. */
function* jsonlTests(display: string, file: string, build: AssertionBuilder): Generator<DraftTest> {
  const lines = new JsonlLines(display, file);
  for (const { line, index, offset, bytes } of textLines(file)) {
    if (line.trim() === '') continue;
    // Set on the draft, not spread into a copy of it: a copy per test was 3% of planning a 5,000-test file.
    const draft = jsonlTest(display, line, index, build);
    draft.line = { lines, offset, bytes, index };
    yield draft;
  }
}

/**
 * A JSONL tests file's lines read back, each drafted again as when it was first read. The reader refuses a changed
 * file, so a line is the one checked when loaded: its assertions are restored, not checked again.
 */
class JsonlLines {
  private readonly reader: LineReader;

  constructor(
    private readonly display: string,
    file: string,
  ) {
    this.reader = new LineReader(file, display);
  }

  draft(offset: number, bytes: number, index: number): DraftTest {
    return jsonlTest(this.display, this.reader.read(offset, bytes), index, restore);
  }
}

const restore: AssertionBuilder = (source, path, raw) => restoreAssertion(source, path, raw as Record<string, unknown>);

/** The held tests of one JSONL file, read back and finished as when loaded; the last one read is kept. */
class HeldTests implements HeldTestSource {
  private last: { offset: number; test: TestSpec } | undefined;

  constructor(
    private readonly lines: JsonlLines,
    private readonly finish: TestFinish,
  ) {}

  test(id: string, offset: number, bytes: number, index: number): TestSpec {
    if (this.last?.offset === offset) return this.last.test;
    const test = finishTest(this.lines.draft(offset, bytes, index), id, this.finish, false);
    this.finish.visit?.(test);
    this.last = { offset, test };
    return test;
  }
}

/**
 * One JSONL line. JSON.parse is ten times faster than a YAML parse with positions, which matters for files of
 * 100,000 tests; only a line that fails is parsed again as YAML, for an error at its exact column.
 */
const jsonlTest = (display: string, line: string, index: number, build: AssertionBuilder): DraftTest => {
  try {
    const value: unknown = JSON.parse(line);
    return draftTest(new PointSource(value, { file: display, line: index + 1, col: 1 }), [], value, build);
  } catch {
    const one = YamlSource.parse(display, line, index);
    return draftTest(one, [], one.value, build);
  }
};

/**
 * Numbers tests `t<N>` (1-based over the whole file) when they have no id, applies default_test and `--var`,
 * checks ids. A JSONL file's tests beyond the plan's `whole` are held by their line once finished (held-test.ts).
 */
export const finishTests = (drafts: Iterable<DraftTest>, finish: TestFinish): TestSpec[] => {
  const seen = new Map<string, SourcePosition>();
  const held = new Map<JsonlLines, HeldTests>();
  const tests: TestSpec[] = [];
  for (const draft of drafts) {
    const id = uniqueId(draft, tests.length, seen);
    const test = finishTest(draft, id, finish);
    finish.visit?.(test);
    finish.loaded?.(test);
    tests.push(draft.line && !holdsWhole(finish.whole) ? holdLine(draft.line, id, test, finish, held) : test);
  }
  return tests;
};

/** A JSONL file's test held by its line, read back through its file's one source. */
const holdLine = (
  { lines, offset, bytes, index }: DraftLine,
  id: string,
  test: TestSpec,
  finish: TestFinish,
  sources: Map<JsonlLines, HeldTests>,
): HeldTest => {
  let source = sources.get(lines);
  if (!source) {
    // Without `loaded`, which sees a test once: a held test is read back until its case is taken.
    const { loaded: _once, ...again } = finish;
    source = new HeldTests(lines, again);
    sources.set(lines, source);
  }
  return new HeldTest(id, test.description, offset, bytes, index, source);
};

/** The test's id, `t<i+1>` when it has none; one used before in the file is refused. */
const uniqueId = (draft: DraftTest, i: number, seen: Map<string, SourcePosition>): string => {
  const id = draft.id ?? `t${i + 1}`;
  const first = seen.get(id);
  if (first) {
    const at = draft.id === undefined ? draft.path : [...draft.path, 'id'];
    throw draft.source.fail(
      at,
      `duplicate test id "${id}" (first used at ${first.file}:${first.line ?? '?'})`,
      draft.id === undefined
        ? `tests without an id are named t<N> by position; rename the test "${id}" or give this one an id`
        : 'give each test a unique id',
    );
  }
  seen.set(id, draft.where);
  return id;
};

/** `check`: false for a test read back, whose templates were checked when it was loaded. */
const finishTest = (
  draft: DraftTest,
  id: string,
  { defaults, compileSteps, given = {} }: TestFinish,
  check = true,
): TestSpec => {
  // Without default_test or --var vars, the draft's own (each test's alone) are used, not copied.
  const vars = hasKeys(defaults.vars) || hasKeys(given) ? { ...defaults.vars, ...draft.vars, ...given } : draft.vars;
  // A test's own assertions and steps may read only the vars it has (its own, default_test's, --var's).
  if (check) checkTestTemplates(draft.source, draft.path, draft, new Set(Object.keys(vars)), true);
  const steps = compileSteps ? compileSteps(draft, defaults.steps ?? noSteps) : (defaults.steps ?? noSteps);
  // concat allocates exactly: a spread grows the array's store past its length, held by every test of a plan.
  const assert = defaults.assert.length ? defaults.assert.concat(draft.assert) : draft.assert;
  const threshold = draft.threshold ?? defaults.threshold ?? 1;
  const repeat = draft.repeat ?? 1;
  const plain = draft.description === undefined && draft.metadata === undefined && !steps.before.length;
  // As with assertions, a plain literal is the smaller object; the keys and their order are the same.
  if (plain && !steps.after.length) return { id, vars, assert, threshold, repeat, where: draft.where };
  return {
    id,
    ...(draft.description !== undefined ? { description: draft.description } : {}),
    vars,
    assert,
    threshold,
    repeat,
    ...(draft.metadata !== undefined ? { metadata: draft.metadata } : {}),
    where: draft.where,
    ...(steps.before.length ? { before: steps.before } : {}),
    ...(steps.after.length ? { after: steps.after } : {}),
  };
};

const hasKeys = (o: object): boolean => {
  for (const _ in o) return true;
  return false;
};
