import { connect } from 'node:net';
import { z } from 'zod';
import { sleep } from '../../sleep.js';

/** How a background service says it is up: exactly one of a TCP port, an HTTP URL or a command exiting 0. */
export const readiness = () =>
  z
    .strictObject({
      /** `8080` (on 127.0.0.1) or `host:port`. */
      tcp: z.union([z.int().min(1).max(65535), z.string().regex(/^[^:]+:\d+$/)]).optional(),
      /** Ready when a GET answers with a status below 500. */
      http: z.url().optional(),
      command: z.string().min(1).optional(),
      timeout_s: z.number().positive().default(30),
      interval_ms: z.int().positive().default(100),
    })
    .refine((r) => [r.tcp, r.http, r.command].filter((v) => v !== undefined).length === 1, {
      message: 'ready needs exactly one of `tcp`, `http` or `command`',
    });
export type Readiness = z.output<ReturnType<typeof readiness>>;

const tcpOpen = (target: number | string): Promise<boolean> => {
  const [host, port] = typeof target === 'number' ? ['127.0.0.1', target] : target.split(':');
  return new Promise((resolve) => {
    const socket = connect({ host: String(host), port: Number(port) });
    socket.setTimeout(1000);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
};

const httpUp = async (url: string): Promise<boolean> => {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.body?.cancel();
    return res.status < 500;
  } catch {
    return false;
  }
};

const commandOk = async (
  command: string,
  opts: { cwd: string; env: Record<string, string | undefined> },
): Promise<boolean> => {
  // Loaded on first use: execa costs ~90 ms of CPU that a command starting no process should not pay.
  const { execa } = await import('execa');
  const r = await execa(command, {
    shell: true,
    cwd: opts.cwd,
    env: opts.env,
    extendEnv: false,
    reject: false,
    timeout: 10_000,
  });
  return r.exitCode === 0;
};

/** Polls until ready; throws when `gone()` (the service died), on timeout, or CanceledError on abort. */
export const waitReady = async (
  check: Readiness,
  signal: AbortSignal,
  gone: () => boolean,
  opts: { cwd: string; env: Record<string, string | undefined> },
): Promise<void> => {
  const until = Date.now() + check.timeout_s * 1000;
  for (;;) {
    if (gone()) throw new Error('exited before it was ready');
    const up =
      check.tcp !== undefined
        ? await tcpOpen(check.tcp)
        : check.http !== undefined
          ? await httpUp(check.http)
          : await commandOk(check.command ?? 'false', opts);
    if (up) return;
    if (Date.now() > until) throw new Error(`not ready after ${check.timeout_s}s`);
    await sleep(check.interval_ms, signal);
  }
};
