#!/usr/bin/env node
// CommonJS (bin/package.json), not an ES module: Node starts an ES module entry through its ES module loader, ~8 ms
// of CPU (loading and compiling the loader's own modules) that a CommonJS entry does without: 2.5-5% of a one-case
// eval run (alternated pairs timed by perf stat: lower in 24 of 24, 16 of 16 and 44 of 60). The loader still comes
// when a project's module is imported (below).
const { createHash } = require('node:crypto');
const {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} = require('node:fs');
const { createRequire } = require('node:module');
const { availableParallelism, tmpdir } = require('node:os');
const { dirname, join } = require('node:path');
const { setFlagsFromString } = require('node:v8');
const { Script } = require('node:vm');

// V8 lets the old generation grow to up to 4× what survived the last full collection before collecting again.
// A run promotes each in-flight case's garbage, so a 100,000-case run climbed 4× its plan (~630 MB of heap, ~170
// MB live) before a collection; 1.5× bounds it near what the plan holds while it is planned (one synchronous
// stretch). A run then sizes each growth by what the heap keeps (src/cli/old-generation.ts), and `proctor worker`,
// which holds no plan, goes back to V8's own policy (src/cli/commands/worker.ts).
const startFlags = ['--heap-growing-percent=50'];
// V8 optimises a function on its compiler threads once it has run a budget of bytecode. Much of a command's code
// runs briefly (start-up, loading, planning, a case's first calls), where optimising costs more than it saves. At
// 4× Node 20's budget a 1,000-case run took ~20% less CPU; at 5,000 to 20,000 cases and for a 100,000-test plan the
// difference was within the noise, the compiler threads ~10% less busy (8×: less CPU at 5,000, more at 20,000).
// A queue worker's cases cost ~35% more CPU at Node's budget, and no less at 8× or 16× (bench/worker-cpu.ts).
// An eval run of fewer than 10,000 cases does without the optimising compiler (src/cli/optimisation-budget.ts).
startFlags.push('--interrupt-budget=270336');
// The young generation starts at 2 MB, and a command's start (its modules, their schemas) fills it several times over
// with objects that live as long as the command: each collection copies them, and at V8's growth (×2, once most of
// it survives) a one-case eval run made 6 before it ran its case. Grown ×8 at once, to 16 MB: 3, a one-case run
// 900 -> 870 M instructions (valgrind), CPU 0.975 (perf stat, alternated pairs: lower in 14 of 16). A run stops its
// growth and lets it go again (src/cli/young-generation.ts), then leaves it at V8's own ×2; another command keeps ×8,
// which brings its young generation no larger than V8's largest (32 MB), in fewer steps when most of it survives.
startFlags.push('--semi-space-growth-factor=8');
// V8 drops the bytecode of a function that has not run for a few full collections, and compiles it again when it
// next runs: a run's start-up and planning code, met again by its report. A 1,000-case run that made two full
// collections recompiled ~40 M instructions' worth (valgrind: Compiler::Compile 121 -> 81 M without flushing); at
// 5,000 cases 11.26 -> 11.18 G in all. Peak RSS the same.
startFlags.push('--no-flush-bytecode');
// V8 scavenges its young generation with up to 5 threads (its 4 workers and the main one), whatever the cores. On 2
// cores they take turns with each other and with the model server's process, and each thread's share of a small
// young generation costs more to hand out and take back than it saves. With the main thread alone, in alternated
// pairs on 2 cores: 5,000 cases -j 50, 1.5-3.5% less CPU (bench/ab.ts: lower in 5 of 8 pairs; 9 of 10 in a slower
// phase of the machine), wall the same; 1,000 cases, 1.4-2.0% less (11 of 12); 20,000 cases within the noise.
// Read at each scavenge. Left to V8 where there are more cores, on which it was not measured.
if (availableParallelism() <= 2) startFlags.push('--no-parallel-scavenge');
// An eval run turns V8's optimising compiler off, and on again by its size: on here, when its code cache is made.
startFlags.push('--turbofan');
for (const flag of startFlags) setFlagsFromString(flag);

// The CLI is one CommonJS script (scripts/bundle.js), compiled here with V8's code cache: compiling it (and each
// function on its first call) was ~45% of a one-case eval run's instructions. The cache is per command (each
// compiles its own functions) and per build of the script, and is written once, when a command ends without one
// (or with one V8 refused): beside the script, or where the package cannot be written to (a system-wide install),
// under the system's temporary folder. It holds compiled code, never data.
const file = join(__dirname, '..', 'dist', 'proctor', 'main.cjs');
const { size, mtimeMs } = statSync(file);
// V8 checks a cache against its script's length alone, so the key must tell builds apart: an install from npm dates
// every file alike, so its version does there, and a rebuild in place changes the file's time.
const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
const build = createHash('sha1').update(`${version}\n${file}\n${size}\n${mtimeMs}`).digest('hex').slice(0, 16);
const cacheDirs = [join(dirname(file), '.cache'), join(tmpdir(), `proctor-code-cache-${process.getuid?.() ?? 0}`)];
// A dry run compiles none of what running does: its own cache, or a first dry run would leave runs theirs to compile.
const words = process.argv.slice(2, 4).filter((word) => /^[a-z][a-z-]*$/.test(word));
if (process.argv.includes('--dry-run')) words.push('dry');
const command = words.join('-') || 'proctor';
const cacheName = `${build}-${command}.bin`;
/**
 * Reads whole files into one buffer, each over the one before: the start reads the script (2.2 MB), done with once
 * its text is copied into a string, and then its cache (1.8 MB). Each page of a new buffer costs a page fault when it
 * is first written, ~12 µs on the virtual machines measured: a buffer of its own for the cache was ~440 of them.
 */
const fileReader = () => {
  let buffer = Buffer.alloc(0);
  return (path) => {
    const fd = openSync(path, 'r');
    try {
      const { size } = fstatSync(fd);
      if (buffer.length < size) buffer = Buffer.allocUnsafeSlow(size);
      let read = 0;
      for (let n = -1; read < size && n !== 0; read += n) n = readSync(fd, buffer, read, size - read, read);
      return buffer.subarray(0, read);
    } finally {
      closeSync(fd);
    }
  };
};
/** The cache of this build and command, from the first place that has one. */
const readCache = (read) => {
  for (const dir of cacheDirs) {
    try {
      return read(join(dir, cacheName));
    } catch {
      // None there.
    }
  }
  return undefined;
};
/** Writes the cache into `dir`, dropping earlier builds' caches; false when `dir` cannot be written to. */
const writeCache = (dir, data) => {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(dir)) if (!name.startsWith(build)) rmSync(join(dir, name), { force: true });
    // Renamed into place: a command starting meanwhile finds a whole cache or none.
    const part = join(dir, `${cacheName}.${process.pid}`);
    writeFileSync(part, data);
    renameSync(part, join(dir, cacheName));
    return true;
  } catch {
    return false;
  }
};
/** The script compiled, with the cache when there is one; whether a cache should be written once it has run. */
const compile = () => {
  const read = fileReader();
  // The file is a function expression over CommonJS's arguments (scripts/bundle.js), compiled as it is. It is
  // ASCII (esbuild escapes the rest), so read as latin1: a copy, not UTF-8's decoding (~8 ms of 3.6 MB).
  const source = read(file).toString('latin1');
  // Into the buffer the script was read into: V8 reads the cache while it compiles, and keeps none of it.
  const cachedData = readCache(read);
  const script = new Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) });
  return { script, stale: !cachedData || script.cachedDataRejected === true };
};
/** Compiles the CLI and runs the command line. */
const run = () => {
  const { script, stale } = compile();
  if (stale) {
    process.once('exit', (code) => {
      // Only from a command that did its work (0, or 1 for failed cases): one refused for bad input or stopped holds
      // little of what that command compiles, and its cache, taken as it is, would leave every later run to compile it.
      if (code > 1) return;
      try {
        // V8 accepts a cache only under the flags it was made with: those set above, which a run changes.
        for (const flag of startFlags) setFlagsFromString(flag);
        const data = script.createCachedData();
        for (const dir of cacheDirs) if (writeCache(dir, data)) break;
      } catch {
        // A cache that cannot be made costs the next start its compile, nothing else.
      }
    });
  }
  // A project's own modules (a module step, a transform) are imported from here: a script's import() needs a flag.
  globalThis[Symbol.for('proctor.import')] = (url) => import(url);
  const bundle = { exports: {} };
  script.runInThisContext()(bundle.exports, createRequire(file), bundle, file, dirname(file));

  bundle.exports.main(process.argv).then((code) => {
    process.exitCode = code;
  });
};
// Once nothing is left for the event loop to do, the command ends as Node would end it ('exit' and its listeners, the
// exit code), less Node's teardown: V8 frees its heap page by page, where the kernel frees a process's memory at once.
// The teardown was ~17 ms of a one-case eval run's ~290 ms of CPU (perf stat, alternated pairs: lower in 19 of 20).
// Not sooner than that: what a command leaves running (a child's exit, a write to a pipe) still ends first.
process.once('beforeExit', () => process.exit());
// `proctor --version` alone is answered from the package.json read above: compiling the CLI only to have commander
// print the same line was half of that command's CPU.
if (process.argv.length === 3 && ['--version', '-V'].includes(process.argv[2])) process.stdout.write(`${version}\n`);
else run();
