import { request } from 'node:http';
import { type CliProcess, startCli, waitFor } from './cli.js';

/** A running `proctor serve --port 0` in a project, and where it listens. */
export interface ServedExplorer {
  cli: CliProcess;
  url: string;
  port: number;
  stop(): Promise<void>;
}

export const serveExplorer = async (
  cwd: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<ServedExplorer> => {
  const cli = startCli(['serve', '--port', '0', ...args], { cwd, env, timeoutMs: 300_000 });
  await waitFor(() => /explorer on (http:\S+)/.test(cli.stdout()) || cli.child.exitCode !== null);
  const url = /explorer on (http:\S+)/.exec(cli.stdout())?.[1];
  if (!url) throw new Error(`serve did not start: ${cli.stderr()}`);
  return {
    cli,
    url,
    port: Number(new URL(url).port),
    stop: async () => {
      cli.child.kill('SIGTERM');
      await cli.done;
    },
  };
};

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with exactly these headers (fetch will not send a foreign Host) and a raw, unnormalised path. */
export const rawRequest = (
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: { host: `127.0.0.1:${port}`, ...options.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });

/** The CSRF token the SPA's index.html carries. */
export const csrfOf = async (port: number): Promise<string> => {
  const page = await rawRequest(port, '/');
  const token = /name="proctor-csrf" content="([^"]+)"/.exec(page.body)?.[1];
  if (!token) throw new Error('no CSRF token in index.html');
  return token;
};

/** Reads server-sent events until `enough` holds for what was read, or the time is up. */
export const readEvents = async (
  url: string,
  headers: Record<string, string>,
  enough: (events: { id?: string; event: string; data: string }[]) => boolean,
  timeoutMs = 20_000,
): Promise<{ id?: string; event: string; data: string }[]> => {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const events: { id?: string; event: string; data: string }[] = [];
  try {
    const res = await fetch(url, { headers, signal: abort.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    while (!enough(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const e: { id?: string; event: string; data: string } = { event: 'message', data: '' };
        for (const line of block.split('\n')) {
          const [field, ...rest] = line.split(':');
          const value = rest.join(':').replace(/^ /, '');
          if (field === 'id') e.id = value;
          else if (field === 'event') e.event = value;
          else if (field === 'data') e.data += value;
        }
        if (block && !block.startsWith(':')) events.push(e);
        end = buffer.indexOf('\n\n');
      }
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return events;
};
