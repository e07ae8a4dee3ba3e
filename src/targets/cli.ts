import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { CanceledError, ProctorError } from '../errors.js';
import { once } from '../once.js';
import { zeroUsage } from '../records.js';
import { killGroup, trackGroup } from './process-group.js';
import type { TargetDef, TargetOutput } from './target.js';
import { singleTurn } from './transcript.js';
import { varsEnv } from './vars-env.js';

const config = once(() =>
  z.strictObject({
    /** A string runs through /bin/sh; an argv array runs the program directly, with no shell. */
    command: z.union([z.string().min(1), z.array(z.string()).min(1)]),
    /** stdin: piped in · arg: appended as the last argument · file: written to a temp file, see below. */
    prompt_via: z.enum(['stdin', 'arg', 'file']).default('stdin'),
    /** Relative to the directory of the file that declared the target. Default: the case's workspace. */
    cwd: z.string().optional(),
    env: z.record(z.string(), z.string()).default({}),
    timeout_s: z.number().positive().default(300),
    /** On cancel or timeout: seconds between SIGTERM and SIGKILL, for an agent that saves its state first. */
    kill_grace_s: z.number().nonnegative().default(3),
    /** Read the answer from this file (relative to cwd) instead of stdout. */
    output_file: z.string().optional(),
  }),
);

const promptFileToken = '{prompt_file}';
const tailChars = 2000;

const tail = (s: string): string => (s.length > tailChars ? `…${s.slice(-tailChars)}` : s);
const stripOneNewline = (s: string): string => s.replace(/\r?\n$/, '');

/** A command under test, e.g. a coding agent: the prompt goes in, stdout (or output_file) comes out. */
export const cli: TargetDef<ReturnType<typeof config>> = {
  config,
  create: (cfg, context) => {
    const timeoutMs = cfg.timeout_s * 1000;
    const killGraceMs = Math.round(cfg.kill_grace_s * 1000);

    return {
      invoke: async (input, signal) => {
        if (signal.aborted) throw new CanceledError();
        const started = performance.now();
        const cwd = cfg.cwd === undefined ? (input.cwd ?? context.baseDir) : path.resolve(context.baseDir, cfg.cwd);
        const outputFile = cfg.output_file === undefined ? undefined : path.resolve(cwd, cfg.output_file);
        // A file left by an earlier attempt in a reused workspace must not pass for this attempt's answer.
        if (outputFile) await rm(outputFile, { force: true });

        // Made only when a prompt or vars go through a file, and removed when the command ends.
        let tempDir: string | undefined;
        const temp = async (): Promise<string> => {
          tempDir ??= await mkdtemp(path.join(tmpdir(), 'proctor-cli-'));
          return tempDir;
        };
        // An undefined value keeps a variable of Proctor's own environment from reaching the command.
        const env: Record<string, string | undefined> = {
          ...cfg.env,
          ...(await varsEnv(input.vars, temp)),
          // An agent run from its own directory (`cwd:`) still needs to know which workspace to change.
          ...(input.cwd ? { PROCTOR_WORKSPACE: input.cwd } : {}),
        };
        // Loaded on first use: execa costs ~90 ms of CPU that a command starting no process should not pay.
        const { execa } = await import('execa');
        let file: string;
        let args: string[];
        if (cfg.prompt_via === 'file') {
          const promptFile = path.join(await temp(), 'prompt.txt');
          await writeFile(promptFile, input.prompt);
          env.PROCTOR_PROMPT_FILE = promptFile;
        }
        const extra = cfg.prompt_via === 'arg' ? [input.prompt] : [];
        if (typeof cfg.command === 'string') {
          // The shell expands the variable itself, so a path with spaces or quotes needs no escaping here.
          const script = cfg.command.replaceAll(promptFileToken, '"$PROCTOR_PROMPT_FILE"');
          // `"$@"` passes the prompt as one argument, never re-parsed by the shell.
          file = '/bin/sh';
          args = ['-c', extra.length > 0 ? `${script} "$@"` : script, 'proctor', ...extra];
        } else {
          const promptFile = env.PROCTOR_PROMPT_FILE ?? promptFileToken;
          const [program, ...rest] = cfg.command.map((a) => a.replaceAll(promptFileToken, promptFile));
          file = program!;
          args = [...rest, ...extra];
        }

        const stop = new AbortController();
        let timedOut = false;
        const onAbort = (): void => stop.abort();
        signal.addEventListener('abort', onAbort, { once: true });
        const timer = setTimeout(() => {
          timedOut = true;
          stop.abort();
        }, timeoutMs);
        let untrack: (() => void) | undefined;
        try {
          // The awaits above (stale output, prompt file) give an abort time to land before the listener existed.
          if (signal.aborted) throw new CanceledError();
          const subprocess = execa(file, args, {
            cwd,
            env,
            ...(cfg.prompt_via === 'stdin' ? { input: input.prompt } : { stdin: 'ignore' as const }),
            cancelSignal: stop.signal,
            forceKillAfterDelay: killGraceMs,
            detached: true,
            reject: false,
            stripFinalNewline: false,
          });
          const pid = subprocess.pid;
          if (pid !== undefined) {
            untrack = trackGroup(pid);
            stop.signal.addEventListener('abort', () => killGroup(pid, killGraceMs), { once: true });
          }
          const result = await subprocess;
          const stdout = String(result.stdout ?? '');
          const stderr = String(result.stderr ?? '');
          const where = typeof cfg.command === 'string' ? cfg.command : cfg.command.join(' ');
          const cause = { exitCode: result.exitCode ?? null, signal: result.signal, stdout: tail(stdout), stderr };

          if (signal.aborted) throw new CanceledError();
          if (timedOut) {
            throw new ProctorError('timeout', `${where}: still running after ${cfg.timeout_s} s`, { cause });
          }
          if (result.signal) {
            throw new ProctorError('target_crash', `${where}: killed by ${result.signal}: ${tail(stderr)}`, { cause });
          }
          if (result.exitCode !== 0) {
            const how = result.exitCode === undefined ? result.shortMessage : `exited with code ${result.exitCode}`;
            throw new ProctorError('target_crash', `${where}: ${how}: ${tail(stderr || stdout)}`, { cause });
          }

          let text = stripOneNewline(stdout);
          if (outputFile) {
            try {
              text = await readFile(outputFile, 'utf8');
            } catch (error) {
              throw new ProctorError('malformed_output', `${where}: exited 0 but wrote no ${cfg.output_file}`, {
                cause: error,
              });
            }
          }
          const output: TargetOutput = {
            text,
            transcript: singleTurn(input.prompt, text),
            usage: zeroUsage(),
            durationMs: performance.now() - started,
            process: { stdout, stderr, exitCode: result.exitCode ?? null },
          };
          return output;
        } finally {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          untrack?.();
          if (tempDir) await rm(tempDir, { recursive: true, force: true });
        }
      },
    };
  },
  references: ({ command, cwd }) => ({ commands: [command], ...(cwd !== undefined ? { cwd } : {}) }),
};
