import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { CanceledError, ProctorError } from '../../errors.js';
import { extended } from '../../extended.js';
import { childProcess } from '../../node-modules.js';
import { once } from '../../once.js';
import { sleep } from '../../sleep.js';
import { interpolateEnv } from '../../targets/secrets.js';
import { varsEnv } from '../../targets/vars-env.js';
import { writeOwnerFile } from '../../workspaces/owner-file.js';
import { startTicks, stopGroup } from '../process-tree.js';
import { type Resource, resourcesPath, runDir } from '../resources.js';
import { serviceFile } from '../teardown.js';
import { type Readiness, readiness, waitReady } from './readiness.js';
import type { StepContext, StepDef } from './step.js';

const config = once(() =>
  z.strictObject({
    /** A string runs through /bin/sh; an argv array runs the program directly. */
    command: z.union([z.string().min(1), z.array(z.string()).min(1)]),
    /** Relative to the workspace (or to the task file when there is none). */
    cwd: z.string().optional(),
    /** Added to the environment; `${VAR}` is resolved when the step runs, so its value is never stored. */
    env: z.record(z.string(), z.string()).default({}),
    /** Start a service that lives until teardown, instead of waiting for the command to end. */
    background: z.boolean().default(false),
    ready: readiness().optional(),
  }),
);

const tailChars = 4000;
const tail = (s: string): string => (s.length > tailChars ? `…${s.slice(-tailChars)}` : s);
const killGraceMs = 2000;

const commandLine = (command: string | string[]): [string, string[]] =>
  typeof command === 'string' ? ['/bin/sh', ['-c', command]] : [command[0] as string, command.slice(1)];

type Environment = Record<string, string | undefined>;

/**
 * Calls `use` with the step's environment. Vars too large for an environment variable go in a file named by
 * PROCTOR_VARS_FILE (as for a cli target), which lives until `use` ends: a service reads it before it is ready.
 */
const withEnvironment = async <T>(
  step: z.output<ReturnType<typeof config>>,
  ctx: StepContext,
  use: (env: Environment) => Promise<T>,
): Promise<T> => {
  let tempDir: string | undefined;
  const temp = async (): Promise<string> => {
    tempDir ??= await mkdtemp(path.join(tmpdir(), 'proctor-exec-'));
    return tempDir;
  };
  try {
    return await use({
      ...(ctx.services.env as Record<string, string>),
      ...interpolateEnv(step.env, ctx.services.env),
      PROCTOR_RUN_ID: ctx.runId,
      PROCTOR_INSTANCE_ID: ctx.instanceId,
      ...(await varsEnv(ctx.vars, temp)),
      PROCTOR_OVERRIDES: JSON.stringify(ctx.overrides),
      // Scripts beside the task file (a service, a fixture) are found from here, whatever the working directory.
      PROCTOR_TASK_DIR: ctx.baseDir,
      ...(ctx.workspace ? { PROCTOR_WORKSPACE: ctx.workspace } : {}),
    });
  } finally {
    if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
  }
};

const workingDir = (step: z.output<ReturnType<typeof config>>, ctx: StepContext): string => {
  const base = ctx.workspace ?? ctx.baseDir;
  return step.cwd === undefined ? base : path.resolve(base, step.cwd);
};

/** Runs a command to its end; a non-zero exit is `setup_failed`. Its stdout becomes `outputs.<step>.text`. */
const runForeground = (step: z.output<ReturnType<typeof config>>, ctx: StepContext) =>
  withEnvironment(step, ctx, (env) => runCommand(step, ctx, env));

const runCommand = async (step: z.output<ReturnType<typeof config>>, ctx: StepContext, env: Environment) => {
  const [file, args] = commandLine(step.command);
  // Loaded on first use: execa costs ~90 ms of CPU that a command starting no process should not pay.
  const { execa } = await import('execa');
  const started = performance.now();
  const child = execa(file, args, {
    cwd: workingDir(step, ctx),
    env,
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    detached: true,
    stripFinalNewline: false,
  });
  const onAbort = () => {
    if (child.pid !== undefined) void stopGroup(child.pid, null, killGraceMs);
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const result = await child.finally(() => ctx.signal.removeEventListener('abort', onAbort));
  if (ctx.signal.aborted) throw new CanceledError();
  const stdout = String(result.stdout ?? '');
  const stderr = String(result.stderr ?? '');
  if (result.exitCode !== 0) {
    const how = result.exitCode === undefined ? result.shortMessage : `exited with code ${result.exitCode}`;
    throw new ProctorError('setup_failed', `step "${ctx.stepId}": ${how}: ${tail(stderr || stdout)}`);
  }
  const summary = { text: stdout.replace(/\r?\n$/, ''), exitCode: result.exitCode };
  return {
    ops: [{ op: 'set' as const, path: `outputs.${ctx.stepId}`, value: summary }],
    output: extended(summary, { stdout: tail(stdout), stderr: tail(stderr), durationMs: performance.now() - started }),
  };
};

/**
 * Starts a service in its own process group, its output in a log file beside the workspace, and waits until
 * it is ready. Its pid is recorded in the context only once it is ready; before that, any failure stops it
 * here, so no path leaves a service nobody recorded.
 */
const runBackground = (step: z.output<ReturnType<typeof config>>, ctx: StepContext) =>
  withEnvironment(step, ctx, (env) => startService(step, ctx, env));

const startService = async (step: z.output<ReturnType<typeof config>>, ctx: StepContext, env: Environment) => {
  const dir = runDir(ctx.workRoot, ctx.instanceId);
  await mkdir(dir, { recursive: true });
  const log = path.join(dir, `${ctx.stepId}.log`);
  await writeOwnerFile(dir, { owner: ctx.services.owner, run_id: ctx.runId, instance_id: ctx.instanceId });
  const fd = openSync(log, 'w');
  const [file, args] = commandLine(step.command);
  const child = childProcess().spawn(file, args, {
    cwd: workingDir(step, ctx),
    env,
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  // The service outlives this step; only teardown ends it, so it must not hold the event loop open.
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new ProctorError('setup_failed', `step "${ctx.stepId}": could not start ${file}`);
  let exited: number | string | null = null;
  child.once('exit', (code, sig) => {
    exited = code ?? sig ?? 'exit';
  });
  const ticks = startTicks(pid);
  // Recorded before the readiness wait: a process killed meanwhile leaves a service that gc can still stop.
  await writeFile(serviceFile(log), JSON.stringify({ pid, start_ticks: ticks }));
  const stop = () => stopGroup(pid, ticks, killGraceMs);
  try {
    const check = step.ready;
    if (check) {
      await waitReady(check, ctx.signal, () => exited !== null, {
        cwd: workingDir(step, ctx),
        env,
      });
    } else await sleep(50, ctx.signal);
    if (exited !== null) throw new Error(`exited (${String(exited)}) before it was ready`);
  } catch (error) {
    await stop();
    await rm(serviceFile(log), { force: true });
    if (error instanceof CanceledError || ctx.signal.aborted) throw new CanceledError();
    const logText = await readFile(log, 'utf8').catch(() => '');
    // No teardown will know of this log (the service was never recorded), and it holds the service's raw
    // output, secrets included: its tail lives on in the error, which is redacted like every step's.
    await rm(log, { force: true });
    const why = error instanceof Error ? error.message : String(error);
    throw new ProctorError('setup_failed', `service "${ctx.stepId}" ${why}: ${tail(logText)}`);
  }
  const resource: Resource = { kind: 'service', pid, startTicks: ticks, log, ready: describe(step.ready) };
  return {
    ops: [
      { op: 'set' as const, path: `${resourcesPath}.${ctx.stepId}`, value: resource },
      { op: 'set' as const, path: `outputs.${ctx.stepId}`, value: { text: '', pid, ready: resource.ready } },
    ],
    output: { pid, log, ready: resource.ready },
  };
};

const describe = (r: Readiness | undefined): string | null =>
  r === undefined
    ? null
    : r.tcp !== undefined
      ? `tcp ${r.tcp}`
      : r.http !== undefined
        ? `http ${r.http}`
        : `command ${r.command}`;

/** A command in the workspace: run to its end, or (`background: true`) a service that lives until teardown. */
export const exec: StepDef<ReturnType<typeof config>> = {
  config,
  execute: (step, ctx) => (step.background ? runBackground(step, ctx) : runForeground(step, ctx)),
};
