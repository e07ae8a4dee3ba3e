// Bundles the built CLI (dist/cli/main.js and the modules it reaches) into one CommonJS file, dist/proctor/main.cjs,
// which bin/proctor.js compiles with V8's code cache; the queue runner's client (BullMQ), which it requires on use, into
// dist/proctor/queue-client.cjs; and the thread that reads a bundle's latest index into
// dist/proctor/latest-rows-worker.cjs. Node resolved, read and linked ~1,300 ES module files one by one (~0.5 s of
// CPU per command), and then compiled the ~60 chunks of a split bundle on every start (~45% of a one-case eval run's
// instructions, its machine's CA certificates aside): one script, cached once compiled, costs neither. A command's
// own modules still run only when it is run (esbuild wraps each dynamically imported module in a lazy initialiser).
// Runs after `tsc` (npm run build). dist/proctor/ sits two folders below the package root, as dist/cli/ does, so
// the modules' paths relative to their own file (package.json, dist/web/) resolve the same.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// zod hangs its 60-odd locales on `z.locales` (and `z.core.locales`), so every bundle held all of them: ~290 KB of
// the code an eval run compiles, though Proctor's messages are English, the locale zod sets itself. Its index
// becomes English alone; a locale imported by its own path (none is) would still be bundled whole.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}v4${path.sep}`)
        ? {
            path: 'english-only',
            namespace: 'zod-locales',
            pluginData: path.join(args.importer, '..', '..', 'locales'),
          }
        : undefined,
    );
    plugin.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: args.pluginData,
      loader: 'js',
    }));
  },
};
// Node modules a command's start would load though few commands use them, each standing in for the module and
// requiring it on first use:
// - commander requires node:child_process when it loads, for subcommands that are programs of their own (Proctor has
//   none): node:child_process and node:dgram, which it loads, were ~3 ms of every command's start. commander, a
//   CommonJS module, reads the functions it uses from the stand-in as properties when it calls them.
// - node:fs/promises loads 8 of Node's modules (readline's among them), each compiled on the start of every command
//   whose modules import it, though an eval run of plain cases calls none of it: one-case eval run, CPU 0.983 (perf
//   stat, alternated pairs: lower in 15 of 20). Its importers are ES modules, whose named imports esbuild copies from
//   a CommonJS module once, when they load: its stand-in is an ES module of functions, each calling Node's own.
const propertiesOnUse = (id) =>
  `let loaded;\nmodule.exports = new Proxy({}, { get: (_, key) => (loaded ??= require('${id}'))[key] });`;
const functionsOnUse = async (id) => {
  const real = await import(id);
  const names = Object.keys(real).filter((name) => name !== 'default' && typeof real[name] === 'function');
  const calls = names.map((name) => `export const ${name} = (...args) => real().${name}(...args);`);
  return `let loaded;\nconst real = () => (loaded ??= require('${id}'));\n${calls.join('\n')}\n`;
};
const modulesOnUse = {
  name: 'modules-on-use',
  setup(plugin) {
    plugin.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      args.importer.includes(`${path.sep}commander${path.sep}`)
        ? { path: 'node:child_process', namespace: 'properties-on-use' }
        : undefined,
    );
    // Not from the stand-in itself, whose require is Node's.
    plugin.onResolve({ filter: /^(node:)?fs\/promises$/ }, (args) =>
      args.namespace === 'functions-on-use' ? undefined : { path: 'node:fs/promises', namespace: 'functions-on-use' },
    );
    plugin.onLoad({ filter: /.*/, namespace: 'properties-on-use' }, (args) => ({
      contents: propertiesOnUse(args.path),
      loader: 'js',
    }));
    plugin.onLoad({ filter: /.*/, namespace: 'functions-on-use' }, async (args) => ({
      contents: await functionsOnUse(args.path),
      loader: 'js',
    }));
  },
};
// BullMQ and its Redis client (with luxon, msgpackr and cron-parser) were 1.5 MB of the CLI's 3.7 MB, which every
// command reads and copies (~28 ms of CPU for the whole script, most of it page faults) though only the queue runner
// uses them: they are a script of their own, queue-client.cjs, which the queue runner's one import of them requires
// when it runs (src/runners/queue-client.ts).
const queueClientApart = {
  name: 'queue-client-apart',
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\/queue-client\.js$/ }, (args) =>
      path.basename(path.dirname(args.importer)) === 'runners'
        ? { path: 'queue-client', namespace: 'queue-client-apart' }
        : undefined,
    );
    plugin.onResolve({ filter: /^\.\/queue-client\.cjs$/ }, () => ({ path: './queue-client.cjs', external: true }));
    plugin.onLoad({ filter: /.*/, namespace: 'queue-client-apart' }, () => ({
      contents: "module.exports = require('./queue-client.cjs');",
      loader: 'js',
    }));
  },
};
const outdir = path.join(root, 'dist', 'proctor');
rmSync(outdir, { recursive: true, force: true });
const common = {
  outdir,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // Node reads and V8 checks the whole script on each start, compiling what the cache lacks: 30% fewer bytes is
  // less of both. Names stay as written, for stacks and profiles.
  minifyWhitespace: true,
  minifySyntax: true,
  // ASCII, esbuild's default, which bin/proctor.js relies on: it reads the script as latin1.
  charset: 'ascii',
  logLevel: 'warning',
  plugins: [zodEnglishOnly, modulesOnUse],
  // Left to Node: the optional native addons of pg and of BullMQ's msgpackr, which load their binaries from their own
  // folders. BullMQ, ioredis and pg are bundled (their Lua scripts are modules now, not files read at run time), and
  // so is better-sqlite3's JavaScript, whose addon src/store/sqlite.ts loads from better-sqlite3's folder.
  external: ['pg-native', 'msgpackr-extract'],
  // A module's own URL is its bundle's, which sits where the split bundle's chunks did.
  define: { 'import.meta.url': '__proctorModuleUrl' },
};
// Strict, as the ES modules it is made of: the directive must come first, before this banner's statement.
const moduleUrl = "'use strict';var __proctorModuleUrl = require('node:url').pathToFileURL(__filename).href;";
// The CLI: one function expression over CommonJS's arguments, which bin/proctor.js compiles as it is and calls.
await build({
  ...common,
  entryPoints: { main: path.join(root, 'dist', 'cli', 'main.js') },
  plugins: [...common.plugins, queueClientApart],
  banner: { js: `(function (exports, require, module, __filename, __dirname) {${moduleUrl}` },
  footer: { js: '})' },
});
// The queue runner's client, which the CLI requires (queueClientApart).
await build({
  ...common,
  entryPoints: { 'queue-client': path.join(root, 'dist', 'runners', 'queue-client.js') },
  banner: { js: moduleUrl },
});
// A worker thread's entry, which Node loads as CommonJS.
await build({
  ...common,
  entryPoints: { 'latest-rows-worker': path.join(root, 'dist', 'bundle', 'latest-rows-worker.js') },
  banner: { js: moduleUrl },
});
console.log(`bundled ${path.relative(root, outdir)}`);
