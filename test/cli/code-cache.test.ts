import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { otherInstall, runCli } from '../support/cli.js';

let install: ReturnType<typeof otherInstall> | undefined;
let temp: string | undefined;
afterEach(() => {
  install?.remove();
  if (temp) rmSync(temp, { recursive: true, force: true });
});

/** An install of its own (its cache folder is no other test's) and a TMPDIR of its own, both empty of caches. */
const setUp = () => {
  install = otherInstall('0.1.0');
  temp = mkdtempSync(join(tmpdir(), 'proctor-tmp-'));
  const cacheDir = join(install.cli, '..', '..', 'dist', 'proctor', '.cache');
  rmSync(cacheDir, { recursive: true, force: true });
  const run = (args: string[]) =>
    runCli(args, { cwd: temp as string, cli: (install as { cli: string }).cli, env: { TMPDIR: temp } });
  return { cacheDir, run, tmp: temp };
};

const onlyFile = (dir: string): string => {
  const names = readdirSync(dir);
  expect(names).toHaveLength(1);
  return join(dir, names[0] as string);
};

// bin/proctor.js compiles the bundle with V8's code cache, written at the end of a command that had none.
describe('the code cache', () => {
  it('is written beside the bundle by a first run and taken as it is by the next', async () => {
    const { cacheDir, run, tmp } = setUp();
    // A run changes V8's flags as it goes (its heap's growth, its optimisation budget); a cache made under other
    // flags than the start's would be refused by every next start.
    writeFileSync(
      join(tmp, 'a.eval.yaml'),
      'targets: [{kind: echo}]\nprompts: ["hi"]\ntests:\n  - assert: [{type: contains, value: hi}]\n',
    );
    expect((await run(['eval', 'run', '-q'])).code).toBe(0);
    const cache = onlyFile(cacheDir);
    expect(cache).toMatch(/-eval-run\.bin$/);
    const written = statSync(cache);
    expect(written.size).toBeGreaterThan(100_000);
    expect((await run(['eval', 'run', '-q'])).code).toBe(0);
    // V8 took it: a refused cache is written again.
    expect(statSync(cache).mtimeMs).toBe(written.mtimeMs);
    expect(readdirSync(tmp).filter((name) => name.startsWith('proctor-code-cache'))).toEqual([]);
    // A dry run compiles little of what a run does, so it keeps a cache of its own.
    expect((await run(['eval', 'run', '--dry-run'])).code).toBe(0);
    expect(readdirSync(cacheDir).map((name) => name.replace(/^[0-9a-f]+-/, ''))).toEqual(
      expect.arrayContaining(['eval-run.bin', 'eval-run-dry.bin']),
    );
    expect(statSync(cache).mtimeMs).toBe(written.mtimeMs);
  });

  it('is not written by a command refused for bad input', async () => {
    const { cacheDir, run, tmp } = setUp();
    writeFileSync(join(tmp, 'a.eval.yaml'), 'targets: [{kind: echo}]\nprompts: ["hi"]\ntests: 3\n');
    expect((await run(['eval', 'run', '-q'])).code).toBe(2);
    expect(existsSync(cacheDir) ? readdirSync(cacheDir) : []).toEqual([]);
  });

  it('is written again when V8 refuses it, the command unaffected', async () => {
    const { cacheDir, run } = setUp();
    await run(['--help']);
    const cache = onlyFile(cacheDir);
    writeFileSync(cache, 'not a code cache');
    const result = await run(['--help']);
    expect([result.code, result.stdout.split('\n')[0], result.stderr]).toEqual([
      0,
      'Usage: proctor [options] [command]',
      '',
    ]);
    expect(readFileSync(cache, 'utf8')).not.toBe('not a code cache');
  });

  it('goes under the temporary folder when the package cannot hold it', async () => {
    const { cacheDir, run, tmp } = setUp();
    // A file where its folder would be: the package's own place cannot be written.
    writeFileSync(cacheDir, '');
    expect((await run(['--help'])).stdout).toContain('Usage: proctor');
    const [dir] = readdirSync(tmp);
    expect(dir).toMatch(/^proctor-code-cache-/);
    expect(onlyFile(join(tmp, dir as string))).toMatch(/-proctor\.bin$/);
  });

  it('is not needed by `--version` alone, which bin/proctor.js answers from package.json without compiling the CLI', async () => {
    const { cacheDir, run, tmp } = setUp();
    for (const flag of ['--version', '-V']) {
      const result = await run([flag]);
      expect([result.code, result.stdout, result.stderr]).toEqual([0, '0.1.0\n', '']);
    }
    expect(existsSync(cacheDir) ? readdirSync(cacheDir) : []).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
    // With anything else on its line, commander answers, the same, and the CLI's cache is written.
    const result = await run(['--version', '--quiet']);
    expect([result.code, result.stdout, result.stderr]).toEqual([0, '0.1.0\n', '']);
    expect(onlyFile(cacheDir)).toMatch(/-proctor\.bin$/);
  });
});
