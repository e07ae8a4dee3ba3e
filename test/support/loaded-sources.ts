import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliPath } from './cli.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bundle = path.join(root, 'dist', 'proctor', 'main.cjs');

/**
 * Notes at exit the CommonJS files the process required (the bundle is read and compiled by bin/proctor.js, not
 * required) and the public modules of Node it loaded, as `node:NAME` (a `NativeModule NAME` of
 * process.moduleLoadList).
 */
const exitNotesModule = (log: string): string =>
  "import { appendFileSync } from 'node:fs';\nimport { builtinModules, createRequire } from 'node:module';\n" +
  "import { pathToFileURL } from 'node:url';\n" +
  'const required = createRequire(import.meta.url).cache;\n' +
  "const builtins = () => process.moduleLoadList.map((m) => m.replace(/^NativeModule /, '')).filter((m) => builtinModules.includes(m)).map((m) => 'node:' + m);\n" +
  `process.on('exit', () => appendFileSync(${JSON.stringify(log)}, [...Object.keys(required).map((f) => pathToFileURL(f).href), ...builtins()].map((l) => l + '\\n').join('')));\n`;

/** The files a built file was made of, by its source map; the file itself when it has none. */
const sourcesOf = (file: string): string[] => {
  if (!existsSync(`${file}.map`)) return [file];
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((s) => path.resolve(path.dirname(file), s));
};

interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: { startOffset: number; count: number }[] }[];
}

/** The bundle's coverage, from the coverage files V8 wrote into `coverageDir`. */
const bundleCoverage = (coverageDir: string): ScriptCoverage => {
  const scripts = readdirSync(coverageDir).flatMap(
    (name) => (JSON.parse(readFileSync(path.join(coverageDir, name), 'utf8')) as { result: ScriptCoverage[] }).result,
  );
  const script = scripts.find((s) => s.url === pathToFileURL(bundle).href || s.url === bundle);
  if (!script) throw new Error(`no coverage of ${bundle}: did bin/proctor.js run it?`);
  return script;
};

/**
 * The source files of the bundle whose code ran, from V8's coverage of the process: esbuild wraps each module a
 * command reaches only when it runs (its dynamic imports, every CommonJS package) in an initialiser named for the
 * module's file (`dist/store/kysely-store.js`, `node_modules/kysely/…`), run once when first imported. A module
 * with no initialiser runs with the bundle's start; one with an initialiser runs if that ran.
 */
const bundleSourcesRun = (coverageDir: string): string[] => {
  const script = bundleCoverage(coverageDir);
  const sourcesOfModule = (name: string): string[] =>
    name.startsWith('dist/') ? sourcesOf(path.join(root, name)) : [path.join(root, name)];
  const initialisers = script.functions.filter((f) => /^(dist|node_modules)\//.test(f.functionName));
  const wrapped = new Set(initialisers.flatMap((f) => sourcesOfModule(f.functionName)));
  const ran = initialisers.filter((f) => (f.ranges[0]?.count ?? 0) > 0).flatMap((f) => sourcesOfModule(f.functionName));
  return [...sourcesOf(bundle).filter((s) => !wrapped.has(s)), ...ran];
};

/** `use` given a new temporary folder, removed when it returns or throws. */
const inTempDir = <T>(use: (dir: string) => T): T => {
  const dir = mkdtempSync(path.join(tmpdir(), 'proctor-loads-'));
  try {
    return use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** Runs the built CLI with `args` in `cwd`, Node given `nodeArgs` first; throws, naming the command, unless it exits 0. */
const runCli = (nodeArgs: string[], args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv): void => {
  const run = spawnSync(process.execPath, [...nodeArgs, cliPath, ...args], { cwd, encoding: 'utf8', env });
  if (run.status !== 0) throw new Error(`proctor ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
};

/**
 * Runs the built CLI with `args` in `cwd` and lists the source files of everything it ran: the bundle's modules
 * that it started (bundleSourcesRun), the CommonJS files it required and Node's own modules (`node:NAME`). What a
 * command starts it evaluates on every start, so this is what a test of start-up cost counts.
 */
export const loadedSources = (args: readonly string[], cwd: string): string[] =>
  inTempDir((dir) => {
    const log = path.join(dir, 'noted.log');
    const notes = path.join(dir, 'notes.mjs');
    writeFileSync(notes, exitNotesModule(log));
    writeFileSync(log, '');
    const coverage = path.join(dir, 'coverage');
    runCli(['--import', pathToFileURL(notes).href], args, cwd, { ...process.env, NODE_V8_COVERAGE: coverage });
    const noted = [...new Set(readFileSync(log, 'utf8').split('\n'))];
    const required = noted.filter((url) => url.startsWith('file:')).map((url) => fileURLToPath(url));
    return [
      ...new Set([...bundleSourcesRun(coverage), ...required.flatMap(sourcesOf)]),
      ...noted.filter((l) => l.startsWith('node:')),
    ];
  });

/**
 * Node's internal modules the built CLI loaded running `args` in `cwd` (`process.moduleLoadList`, e.g.
 * `NativeModule internal/modules/esm/loader`), noted at exit by a CommonJS preload: loadedSources's ES module one
 * would start Node's ES module loader itself.
 */
export const nodeModulesLoaded = (args: readonly string[], cwd: string): string[] =>
  inTempDir((dir) => {
    const log = path.join(dir, 'loaded.log');
    const notes = path.join(dir, 'notes.cjs');
    writeFileSync(
      notes,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(log)}, process.moduleLoadList.join('\\n')));\n`,
    );
    runCli(['-r', notes], args, cwd);
    return readFileSync(log, 'utf8').split('\n');
  });

/**
 * The lines on which each function the built CLI called while running `args` in `cwd` begins, by source file: V8's
 * coverage of the bundle, each function that ran placed in its source by the bundle's source map.
 */
export const sourceLinesRun = (args: readonly string[], cwd: string): Map<string, Set<number>> =>
  inTempDir((dir) => {
    const coverage = path.join(dir, 'coverage');
    runCli([], args, cwd, { ...process.env, NODE_V8_COVERAGE: coverage });
    const text = readFileSync(bundle, 'latin1');
    const lineStarts = [0];
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) lineStarts.push(at + 1);
    const map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')));
    const lines = new Map<string, Set<number>>();
    for (const f of bundleCoverage(coverage).functions) {
      const range = f.ranges[0];
      if (!range || range.count === 0) continue;
      let line = lineStarts.length - 1;
      while ((lineStarts[line] as number) > range.startOffset) line--;
      const entry = map.findEntry(line, range.startOffset - (lineStarts[line] as number));
      if (!('originalSource' in entry)) continue;
      const source = entry.originalSource.startsWith('file:')
        ? fileURLToPath(entry.originalSource)
        : path.resolve(path.dirname(bundle), entry.originalSource);
      const seen = lines.get(source) ?? new Set<number>();
      seen.add(entry.originalLine + 1);
      lines.set(source, seen);
    }
    return lines;
  });
