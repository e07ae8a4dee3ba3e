import { z } from 'zod';
import { ProctorError } from '../errors.js';
import { once } from '../once.js';
import { signalGroup } from '../process-info.js';
import { type GradeInput, type GradeResult, type GraderDef, stoppedGrader } from './grader.js';
import { parseJson } from './parse-json.js';
import { tail } from './text.js';
import { isVerdictObject, readVerdict } from './verdict.js';

const config = once(() =>
  z
    .strictObject({
      value: z.string().min(1).optional(),
      command: z.string().min(1).optional(),
      timeout_s: z.number().positive().default(60),
    })
    .refine((c) => (c.value === undefined) !== (c.command === undefined), {
      message: 'script needs exactly one of `value` or `command`',
    }),
);

/** The case as the script reads it on stdin: snake_case, because these bytes leave the process. */
const toStdin = (input: GradeInput): string =>
  JSON.stringify({
    output: input.output,
    prompt: input.prompt,
    vars: input.vars,
    test: input.test,
    target: input.target,
    usage: {
      input_tokens: input.usage.inputTokens,
      output_tokens: input.usage.outputTokens,
      cost_usd: input.usage.costUsd,
    },
    duration_ms: input.durationMs,
  });

/** A verdict printed on stdout: all of it, or its last line when the script logged before it. */
const stdoutVerdict = (stdout: string): Record<string, unknown> | undefined => {
  const text = stdout.trim();
  if (!text.endsWith('}')) return undefined;
  for (const candidate of [text, text.slice(text.lastIndexOf('\n') + 1)]) {
    const parsed = parseJson(candidate);
    if (parsed.ok && isVerdictObject(parsed.value)) return parsed.value;
  }
  return undefined;
};

const killGraceMs = 2000;

// The shell's children (`sleep 5; ./check`) keep stdout open after the shell dies, and execa waits for stdout to
// close, so the whole process group is signalled (signalGroup), not just the shell.

// 126 and 127 are the shell saying it could not run the command at all: nothing was graded.
const notRunCodes = new Set([126, 127]);

/**
 * Runs a shell command in the case's workspace (or the eval's directory) with the case as JSON on stdin.
 * It passes with exit code 0, or by printing `{pass, score, reason}`; a non-zero exit is a graded failure.
 */
export const script: GraderDef<ReturnType<typeof config>> = {
  config,
  create: ({ value, command, timeout_s }, context) => {
    const shellCommand = value ?? command ?? '';
    const timeoutMs = timeout_s * 1000;
    return async (input, signal): Promise<GradeResult> => {
      // Loaded on first use: execa costs ~90 ms of CPU that a command starting no process should not pay.
      const { execa } = await import('execa');
      if (signal.aborted) throw stoppedGrader(signal, 'script');
      const child = execa(shellCommand, {
        shell: true,
        cwd: input.cwd ?? context.baseDir,
        input: toStdin(input),
        reject: false,
        detached: true,
      });
      let stopped: 'timeout' | 'abort' | undefined;
      let forceKill: NodeJS.Timeout | undefined;
      const stop = (why: 'timeout' | 'abort') => {
        stopped ??= why;
        const pid = child.pid;
        if (pid === undefined) return;
        signalGroup(pid, 'SIGTERM');
        forceKill ??= setTimeout(() => signalGroup(pid, 'SIGKILL'), killGraceMs);
      };
      const timer = setTimeout(() => stop('timeout'), timeoutMs);
      const onAbort = () => stop('abort');
      signal.addEventListener('abort', onAbort, { once: true });
      const result = await child.finally(() => {
        clearTimeout(timer);
        // Once stdout closed the group is gone; a late SIGKILL could hit a group that reused its id.
        clearTimeout(forceKill);
        signal.removeEventListener('abort', onAbort);
      });

      if (stopped === 'abort') throw stoppedGrader(signal, 'script');
      if (stopped === 'timeout') {
        throw new ProctorError('grader_error', `script timed out after ${timeout_s}s: ${shellCommand}`);
      }
      const stdout = typeof result.stdout === 'string' ? result.stdout : '';
      const stderr = typeof result.stderr === 'string' ? result.stderr : '';
      if (result.signal) {
        throw new ProctorError('grader_error', `script killed by ${result.signal}: ${tail(stderr) || shellCommand}`);
      }
      if (result.exitCode === undefined) {
        throw new ProctorError('grader_error', `script could not start: ${result.message}`);
      }

      const verdict = stdoutVerdict(stdout);
      if (verdict) return readVerdict(verdict, 'script');
      if (result.exitCode === 0) return { pass: true, score: 1, reason: 'script exited 0' };
      if (notRunCodes.has(result.exitCode)) {
        throw new ProctorError('grader_error', `script could not run (exit ${result.exitCode}): ${tail(stderr)}`);
      }
      const said = tail(stderr) || tail(stdout);
      return { pass: false, score: 0, reason: `script exited with code ${result.exitCode}${said ? `: ${said}` : ''}` };
    };
  },
  references: ({ value, command }) => ({ commands: [value ?? command ?? ''] }),
};
