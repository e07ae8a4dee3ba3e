import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built CLI: tests drive it as a user would, as a separate process. */
export const cliPath = fileURLToPath(new URL('../../bin/proctor.js', import.meta.url));

const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Another install of the built CLI, as a machine with Proctor `version` would have it: its own package.json,
 * bin and bundle, and this checkout's node_modules. `cli` is its bin/proctor.js, for CliOptions.cli.
 */
export const otherInstall = (version: string): { cli: string; remove: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), 'proctor-install-'));
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, version }));
  cpSync(join(packageRoot, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(packageRoot, 'dist', 'proctor'), join(dir, 'dist', 'proctor'), { recursive: true });
  symlinkSync(join(packageRoot, 'node_modules'), join(dir, 'node_modules'));
  return { cli: join(dir, 'bin', 'proctor.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
};

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  /** Another install's bin/proctor.js (otherInstall); this checkout's by default. */
  cli?: string;
}

export interface CliProcess {
  child: ChildProcess;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  done: Promise<CliResult>;
}

export const startCli = (args: readonly string[], options: CliOptions): CliProcess => {
  const child = spawn(process.execPath, [options.cli ?? cliPath, ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const done = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
};

export const runCli = (args: readonly string[], options: CliOptions): Promise<CliResult> =>
  startCli(args, options).done;

/** Resolves once `predicate` holds, polling every 20 ms; rejects after `timeoutMs`. */
export const waitFor = async (predicate: () => boolean, timeoutMs = 20_000): Promise<void> => {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('timed out waiting for a condition');
    await new Promise((r) => setTimeout(r, 20));
  }
};
