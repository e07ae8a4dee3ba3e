// Bundles the built CLI (dist/cli/main.js and the modules it reaches) into dist/proctor/: a few files instead of
// ~270 of ours and ~1,000 of its dependencies. Node resolves, reads and links each ES module file one by one, which
// cost every command ~0.5 s of CPU before it did anything (a queue worker too, at every start). Each command's
// module stays a chunk of its own, loaded when that command runs.
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
const outdir = path.join(root, 'dist', 'proctor');
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [path.join(root, 'dist', 'cli', 'main.js')],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // Node reads, decodes and compiles every loaded chunk's whole text before running it (~2 MB for an eval run):
  // 30% fewer bytes is ~5% less CPU for a one-case run. Names stay as written, for stacks and profiles.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  plugins: [zodEnglishOnly],
  // Left to Node: the native addons (better-sqlite3, and the optional ones of pg and of BullMQ's msgpackr), which
  // load their binaries from their own folders. BullMQ, ioredis and pg are bundled: a worker starts on ~0.3 s of
  // CPU instead of ~0.5 s (its Lua scripts are modules now, not files read at run time).
  external: ['better-sqlite3', 'pg-native', 'msgpackr-extract'],
  // The CommonJS dependencies bundled into ES modules still call `require` for Node's own modules.
  banner: {
    js: "import { createRequire as __proctorRequire } from 'node:module';\nconst require = __proctorRequire(import.meta.url);",
  },
});
console.log(`bundled ${path.relative(root, outdir)}`);
