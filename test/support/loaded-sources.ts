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

/** Registers the hook, and at exit notes the CommonJS files the process required (they bypass ESM hooks). */
const preloadModule = (hooks: string, log: string): string =>
  "import { appendFileSync } from 'node:fs';\nimport { createRequire, register } from 'node:module';\n" +
  "import { pathToFileURL } from 'node:url';\n" +
  `register(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
  'const required = createRequire(import.meta.url).cache;\n' +
  `process.on('exit', () => appendFileSync(${JSON.stringify(log)}, Object.keys(required).map((f) => pathToFileURL(f).href + '\\n').join('')));\n`;

/** The files a bundle chunk was made of, by its source map; the file itself when it has none. */
const sourcesOf = (file: string): string[] => {
  if (!existsSync(`${file}.map`)) return [file];
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((s) => path.resolve(path.dirname(file), s));
};

/**
 * Runs the built CLI once with `args` in `cwd` and lists the source files of everything it loaded: the ES modules
 * it imported (a chunk of the bundle as the files it was made of, read from its source map) and the CommonJS files
 * it required. What a command loads it compiles on every start, so this is what a test of start-up cost counts.
 */
export const loadedSources = (args: readonly string[], cwd: string): string[] => {
  const dir = mkdtempSync(path.join(tmpdir(), 'proctor-loads-'));
  try {
    const log = path.join(dir, 'loaded.txt');
    const hooks = path.join(dir, 'hooks.mjs');
    const preload = path.join(dir, 'preload.mjs');
    writeFileSync(hooks, hooksModule(log));
    writeFileSync(preload, preloadModule(hooks, log));
    writeFileSync(log, '');
    const run = spawnSync(process.execPath, ['--import', pathToFileURL(preload).href, cliPath, ...args], {
      cwd,
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`proctor ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
    const files = new Set(
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((url) => url.startsWith('file:'))
        .map((url) => fileURLToPath(url)),
    );
    return [...files].flatMap(sourcesOf);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
