// What the benchmarks that run `proctor eval run` against the fake model server share.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export const root = new URL('..', import.meta.url).pathname;
export const cli = join(root, 'bin', 'proctor.js');

/** The middle of `xs` (the mean of the two middle ones for an even count); `xs` is left as it is. */
export const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

export interface FakeServer {
  url: string;
  stop: () => void;
}

/** The fake model server in its own process, so its CPU and memory are not counted as Proctor's. */
export const startFakeServer = (latencyMs: number): Promise<FakeServer> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'bench', 'fake-server.ts'), '--latency-ms', String(latencyMs)],
      // cwd: tsx resolves from the repository, wherever the benchmark was started.
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    child.stdout.once('data', (d: Buffer) => resolve({ url: d.toString().trim(), stop: () => child.kill('SIGTERM') }));
    child.once('error', reject);
  });

/** User + system CPU seconds of a live process (or, given `/task/TID`, of one thread), from /proc (USER_HZ 100). */
export const cpuOf = (pid: number, thread = ''): number => {
  const stat = readFileSync(`/proc/${pid}${thread}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

export interface TimedRun {
  code: number | null;
  wallS: number;
  /** User + system CPU of the proctor process and the children it waited for. */
  cpuS: number;
  /** The system part of it: what file creation and other syscalls cost. */
  sysS: number;
  peakRssMb: number;
  /** Minor page faults: each a page of memory touched for the first time (or again after it was given back). */
  minorFaults: number;
  /** The proctor process's CPU seconds so far, read every `sampleMs` while it ran (when asked for). */
  cpuSamples: { atMs: number; cpuS: number }[];
}

/** The pids of a live process's children (none once it has exited). */
export const childrenOf = (pid: number): number[] => {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
};

/**
 * Runs `node [nodeArgs] bin/proctor.js args` in `cwd` under /usr/bin/time; with `sampleMs`, also reads the proctor
 * process's CPU that often (Date.now() and seconds, at /proc's 10 ms resolution). `bin`: another build's CLI.
 */
export const timeProctor = async (
  cwd: string,
  args: string[],
  nodeArgs: string[] = [],
  sampleMs?: number,
  bin = cli,
): Promise<TimedRun> => {
  const timeFile = join(cwd, 'time.txt');
  const started = process.hrtime.bigint();
  const run = spawn(
    '/usr/bin/time',
    ['-f', '%e %U %S %M %R', '-o', timeFile, process.execPath, ...nodeArgs, bin, ...args],
    {
      cwd,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const cpuSamples: TimedRun['cpuSamples'] = [];
  let pid: number | undefined;
  const sampler =
    sampleMs === undefined
      ? undefined
      : setInterval(() => {
          // /usr/bin/time's child, once it has started: time(1) does not say its pid.
          pid ??= run.pid === undefined ? undefined : childrenOf(run.pid)[0];
          try {
            if (pid !== undefined) cpuSamples.push({ atMs: Date.now(), cpuS: cpuOf(pid) });
          } catch {
            // The process ended between two samples.
          }
        }, sampleMs);
  const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
  clearInterval(sampler);
  const wallS = Number(process.hrtime.bigint() - started) / 1e9;
  // The last line: a killed process gets a "Command terminated by signal" line before it.
  const [, user, sys, maxKb, minorFaults] =
    readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
  const peakRssMb = Math.round((maxKb ?? 0) / 1024);
  return {
    code,
    wallS,
    cpuS: (user ?? 0) + (sys ?? 0),
    sysS: sys ?? 0,
    peakRssMb,
    minorFaults: minorFaults ?? 0,
    cpuSamples,
  };
};

/** Removes the last run's store and bundle from `dir`, so that the next run there starts fresh. */
const clearRun = (dir: string): void => rmSync(join(dir, '.proctor'), { recursive: true, force: true });

/** `eval run -q args` of `bin` in `dir`, timed, after the last run's store and bundle there are removed. */
export const timeFreshEvalRun = (dir: string, bin: string, args: string[] = []): Promise<TimedRun> => {
  clearRun(dir);
  return timeProctor(dir, ['eval', 'run', '-q', ...args], [], undefined, bin);
};

/**
 * The instructions a fresh `eval run -q args` of `bin` in `dir` executes, counted by valgrind's callgrind (all its
 * threads): unlike CPU time, the count does not move with the machine's load, so two builds a percent apart can be
 * told apart in a few runs where CPU time needs dozens of pairs. The run is ~50× slower under valgrind, and the fake
 * model server's latency is then a small part of it. Throws when valgrind is missing or prints no count.
 */
export const countInstructions = async (
  dir: string,
  bin: string,
  args: string[] = [],
): Promise<{ instructions: number; code: number | null }> => {
  clearRun(dir);
  const run = spawn(
    'valgrind',
    ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, bin, 'eval', 'run', '-q', ...args],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  run.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  // valgrind exits as the program it ran did.
  const code = await new Promise<number | null>((resolve, reject) => {
    run.on('error', (error) => reject(new Error(`cannot run valgrind (apt-get install valgrind): ${error.message}`)));
    run.on('close', resolve);
  });
  const refs = /I\s+refs:\s+([\d,]+)/.exec(stderr)?.[1];
  if (refs === undefined) throw new Error(`valgrind printed no instruction count:\n${stderr.slice(-2000)}`);
  return { instructions: Number(refs.replaceAll(',', '')), code };
};
