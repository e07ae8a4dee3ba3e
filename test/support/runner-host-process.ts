import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from './cli.js';
import type { HostConfig, HostEvent } from './runner-host.js';

const hostScript = fileURLToPath(new URL('./runner-host.ts', import.meta.url));

/** A running runner-host.ts child: its events so far, and a way to send it commands. */
export interface RunnerHost {
  child: ChildProcess;
  pid: number;
  events: HostEvent[];
  /** Resolves with the first event (in order, past ones included) that `match` accepts. */
  next<K extends HostEvent['event']>(
    event: K,
    match?: (e: Extract<HostEvent, { event: K }>) => boolean,
  ): Promise<Extract<HostEvent, { event: K }>>;
  send(line: string): void;
  /** SIGKILL, then wait until the OS has reaped it: only then is its pid really gone. */
  kill(): Promise<void>;
  exited: Promise<number | null>;
  stderr(): string;
}

/** Short intervals, so heartbeats and cancel polls happen many times within a test. */
const hostDefaults = { workers: 1, heartbeatMs: 100, leaseMs: 60_000, cancelPollMs: 50 };

export const startRunnerHost = async (
  options: Pick<HostConfig, 'store' | 'runs'> & Partial<HostConfig>,
): Promise<RunnerHost> => {
  const config: HostConfig = { ...hostDefaults, ...options };
  const child = spawn(process.execPath, ['--import', 'tsx', hostScript, JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const events: HostEvent[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) events.push(JSON.parse(line) as HostEvent);
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const host: RunnerHost = {
    child,
    pid: child.pid as number,
    events,
    next: async (event, match) => {
      type E = Extract<HostEvent, { event: typeof event }>;
      const find = (): E | undefined =>
        events.find((e): e is E => e.event === event && (match === undefined || match(e as E)));
      await waitFor(() => find() !== undefined || child.exitCode !== null, 30_000);
      const found = find();
      if (!found) throw new Error(`runner host exited before "${event}": ${stderr}`);
      return found;
    },
    send: (line) => {
      child.stdin?.write(`${line}\n`);
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    exited,
    stderr: () => stderr,
  };
  await host.next('submitted');
  return host;
};
