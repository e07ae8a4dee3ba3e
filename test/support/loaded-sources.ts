import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliPath } from './cli.js';

/** The loader hook that notes every ES module the process loads, one URL a line. */
const hooksModule = (log: string): string =>
  "import { appendFileSync } from 'node:fs';\n" +
  `export const load = (url, context, next) => { appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, context); };\n`;

/** Registers the loader hook, which runs on a thread of its own (so loads node:worker_threads itself). */
const hookingModule = (hooks: string): string =>
  `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`;

/**
 * Notes at exit the CommonJS files the process required (they bypass loader hooks) and the public modules of Node
 * it loaded, as `node:NAME` (a `NativeModule NAME` of process.moduleLoadList).
 */
const exitNotesModule = (log: string): string =>
  "import { appendFileSync } from 'node:fs';\nimport { builtinModules, createRequire } from 'node:module';\n" +
  "import { pathToFileURL } from 'node:url';\n" +
  'const required = createRequire(import.meta.url).cache;\n' +
  "const builtins = () => process.moduleLoadList.map((m) => m.replace(/^NativeModule /, '')).filter((m) => builtinModules.includes(m)).map((m) => 'node:' + m);\n" +
  `process.on('exit', () => appendFileSync(${JSON.stringify(log)}, [...Object.keys(required).map((f) => pathToFileURL(f).href), ...builtins()].map((l) => l + '\\n').join('')));\n`;

/** The files a bundle chunk was made of, by its source map; the file itself when it has none. */
const sourcesOf = (file: string): string[] => {
  if (!existsSync(`${file}.map`)) return [file];
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((s) => path.resolve(path.dirname(file), s));
};

/** Runs the CLI with `args` in `cwd`, `preload` (a module's text) imported first; the lines it wrote to its log. */
const runNoting = (
  dir: string,
  name: string,
  preload: (log: string) => string,
  args: readonly string[],
  cwd: string,
) => {
  const log = path.join(dir, `${name}.log`);
  const module = path.join(dir, `${name}.mjs`);
  writeFileSync(module, preload(log));
  writeFileSync(log, '');
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(module).href, cliPath, ...args], {
    cwd,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`proctor ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return [...new Set(readFileSync(log, 'utf8').split('\n'))];
};

/**
 * Runs the built CLI with `args` in `cwd` and lists the source files of everything it loaded: the ES modules it
 * imported (a chunk of the bundle as the files it was made of, read from its source map), the CommonJS files it
 * required and Node's own modules (`node:NAME`). What a command loads it compiles on every start, so this is what a
 * test of start-up cost counts. Twice: Node's modules are counted by a run without the loader hook's thread.
 */
export const loadedSources = (args: readonly string[], cwd: string): string[] => {
  const dir = mkdtempSync(path.join(tmpdir(), 'proctor-loads-'));
  try {
    const hooks = path.join(dir, 'hooks.mjs');
    writeFileSync(hooks, hooksModule(path.join(dir, 'imported.log')));
    const imported = runNoting(dir, 'imported', () => hookingModule(hooks), args, cwd);
    const noted = runNoting(dir, 'noted', exitNotesModule, args, cwd);
    const files = [...imported, ...noted].filter((url) => url.startsWith('file:')).map((url) => fileURLToPath(url));
    return [...new Set(files)].flatMap(sourcesOf).concat(noted.filter((l) => l.startsWith('node:')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
