import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpFetch, httpRequest } from '../../src/targets/http-fetch.js';
import { rejection } from '../support/rejection.js';

/** A request as the raw server saw it. */
interface RawRequest {
  head: string;
  body: string;
  /** Which connection (0, 1, …) it came on. */
  connection: number;
}

/**
 * A TCP server answering each request with the bytes `respond` writes, so a test can send what node:http's
 * server never would: a response split byte by byte, a 100 Continue, a body ended by closing the connection.
 */
const rawServer = async (respond: (request: RawRequest, socket: Socket) => void) => {
  const requests: RawRequest[] = [];
  const sockets = new Set<Socket>();
  let closed = 0;
  let connections = 0;
  const server: Server = createServer((socket) => {
    const connection = connections++;
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      closed++;
    });
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.toString('latin1', 0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const body = buffered.toString('utf8', end + 4, end + 4 + length);
        buffered = buffered.subarray(end + 4 + length);
        const request = { head, body, connection };
        requests.push(request);
        respond(request, socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (path = '/') => new URL(`http://127.0.0.1:${port}${path}`),
    requests,
    get connections() {
      return connections;
    },
    get closed() {
      return closed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
};

/** Writes `bytes` one byte per write, each a tick apart, so the client reads it in as many pieces. */
const dribble = async (socket: Socket, bytes: string): Promise<void> => {
  for (const byte of Buffer.from(bytes)) {
    socket.write(Buffer.from([byte]));
    await new Promise((resolve) => setImmediate(resolve));
  }
};

const post = (body: string) => ({ method: 'POST', headers: { 'content-type': 'text/plain' }, body });
const text = async (url: URL, init = post('hi')) => (await httpRequest(url, init)).body.toString('utf8');

describe('httpRequest', () => {
  let server: Awaited<ReturnType<typeof rawServer>>;
  afterEach(async () => {
    await server.close();
  });

  it('sends method, path, host, headers and a content-length; keeps the connection for the next request', async () => {
    server = await rawServer((_r, socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'));
    const url = server.url('/v1/chat?x=1');
    const reply = await httpRequest(url, { method: 'POST', headers: { 'x-team': 'evals' }, body: 'héllo' });
    expect([reply.status, reply.statusText, reply.body.toString()]).toEqual([200, 'OK', 'ok']);
    await text(url);
    const [first, second] = server.requests;
    expect(first?.head.split('\r\n')).toEqual([
      'POST /v1/chat?x=1 HTTP/1.1',
      `host: ${url.host}`,
      'x-team: evals',
      'content-length: 6',
      'connection: keep-alive',
    ]);
    expect(first?.body).toBe('héllo');
    expect(second?.connection).toBe(0);
    expect(server.connections).toBe(1);
  });

  it('reads a chunked response that arrives a byte at a time, trailers and all', async () => {
    server = await rawServer((_r, socket) => {
      const chunked = '5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nx-trailer: 1\r\n\r\n';
      void dribble(socket, `HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\nx-a: 1\r\nX-A: 2\r\n\r\n${chunked}`);
    });
    const reply = await httpRequest(server.url(), post('hi'));
    expect(reply.status).toBe(201);
    expect(reply.headers['x-a']).toBe('1, 2');
    expect(reply.body.toString()).toBe('hello, world');
    expect(await text(server.url())).toBe('hello, world');
    expect(server.connections).toBe(1);
  });

  it('skips a 100 Continue, and reads no body for HEAD, 204 and 304 whatever their headers say', async () => {
    server = await rawServer((request, socket) => {
      const path = request.head.split(' ')[1];
      if (path === '/continue')
        socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\ndone');
      else if (path === '/head') socket.write('HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n');
      else socket.write('HTTP/1.1 204 No Content\r\ncontent-length: 50\r\n\r\n');
    });
    expect(await text(server.url('/continue'))).toBe('done');
    const head = await httpRequest(server.url('/head'), { method: 'HEAD', headers: {} });
    expect([head.status, head.body.length]).toEqual([200, 0]);
    const empty = await httpRequest(server.url('/none'), post('x'));
    expect([empty.status, empty.body.length]).toEqual([204, 0]);
    expect(server.requests[1]?.head).not.toContain('content-length');
    expect(server.connections).toBe(1);
  });

  it('reads a body ended by the connection closing, and opens a new connection for the next request', async () => {
    server = await rawServer((_r, socket) => {
      socket.write('HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nall of ');
      setTimeout(() => socket.end('it'), 20);
    });
    expect(await text(server.url())).toBe('all of it');
    expect(await text(server.url())).toBe('all of it');
    expect(server.connections).toBe(2);
  });

  it('does not reuse a connection the server keeps idle for a second or less (Keep-Alive: timeout=1)', async () => {
    server = await rawServer((_r, socket) =>
      socket.write('HTTP/1.1 200 OK\r\nkeep-alive: timeout=1\r\ncontent-length: 1\r\n\r\nk'),
    );
    await text(server.url());
    await text(server.url());
    expect(server.connections).toBe(2);
    await expect.poll(() => server.closed).toBe(2);
  });

  it('opens a new connection when the server has closed an idle one', async () => {
    server = await rawServer((_r, socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nk'));
    await text(server.url());
    await expect.poll(() => server.closed).toBe(1);
    expect(await text(server.url())).toBe('k');
    expect(server.connections).toBe(2);
  });

  it('fails with ECONNRESET when the connection ends mid-response, and with HPE_* on a reply that is not HTTP', async () => {
    server = await rawServer((request, socket) => {
      if (request.body === 'cut') socket.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort');
      else if (request.body === 'drop') socket.end();
      else socket.write('SMTP ready\r\n\r\n');
    });
    const cut = (await rejection(httpRequest(server.url(), post('cut')))) as Error & { code?: string };
    expect([cut.message, cut.code]).toEqual(['aborted', 'ECONNRESET']);
    const dropped = (await rejection(httpRequest(server.url(), post('drop')))) as Error & { code?: string };
    expect([dropped.message, dropped.code]).toEqual(['socket hang up', 'ECONNRESET']);
    const garbled = (await rejection(httpRequest(server.url(), post('x')))) as Error & { code?: string };
    expect(garbled.code).toMatch(/^HPE_/);
  });

  it('closes the connection when the signal aborts, and rejects with an AbortError', async () => {
    server = await rawServer(() => {});
    const controller = new AbortController();
    const call = httpRequest(server.url(), { ...post('wait'), signal: controller.signal });
    await expect.poll(() => server.requests.length).toBe(1);
    controller.abort();
    expect(((await rejection(call)) as Error).name).toBe('AbortError');
    await expect.poll(() => server.closed).toBe(1);
  });

  it('aborts only the calls of a signal still in flight: those it finished leave their connections pooled', async () => {
    const ok = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok';
    server = await rawServer((_r, socket) => socket.write(ok));
    const silent = await rawServer(() => {});
    try {
      const controller = new AbortController();
      const signal = controller.signal;
      // Two calls under the signal finish, each leaving its connection idle in the pool; two more wait elsewhere.
      await Promise.all([
        httpRequest(server.url(), { ...post('a'), signal }),
        httpRequest(server.url(), { ...post('b'), signal }),
      ]);
      const waiting = [0, 1].map(() => httpRequest(silent.url(), { ...post('wait'), signal }));
      await expect.poll(() => silent.requests.length).toBe(2);
      controller.abort();
      for (const call of waiting) expect(((await rejection(call)) as Error).name).toBe('AbortError');
      await expect.poll(() => silent.closed).toBe(2);
      // The finished calls' connections were left alone: the next calls reuse them.
      const again = await Promise.all([httpRequest(server.url(), post('c')), httpRequest(server.url(), post('d'))]);
      expect(again.map((r) => r.body.toString())).toEqual(['ok', 'ok']);
      expect([server.connections, server.closed]).toEqual([2, 0]);
    } finally {
      await silent.close();
    }
  });

  it('sends a header value past ASCII as latin1 and upper-cases the method, as node:http does', async () => {
    server = await rawServer((_r, socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'));
    await httpRequest(server.url(), { method: 'post', headers: { 'x-name': 'café' }, body: 'é' });
    const head = server.requests[0]?.head ?? '';
    expect(head.startsWith('POST / HTTP/1.1')).toBe(true);
    expect(head).toContain('x-name: café');
    expect(server.requests[0]?.body).toBe('é');
    const error = await rejection(httpRequest(server.url(), { method: 'GET /x', headers: {} }));
    expect((error as { code?: string }).code).toBe('ERR_INVALID_HTTP_TOKEN');
  });

  it('refuses a header value that would smuggle in another header', async () => {
    server = await rawServer(() => {});
    const error = await rejection(
      httpRequest(server.url(), { method: 'POST', headers: { 'x-a': 'b\r\nx-evil: 1' }, body: '' }),
    );
    expect((error as { code?: string }).code).toBe('ERR_INVALID_CHAR');
    expect(server.connections).toBe(0);
  });

  it('refuses a header name that is not a token, as node:http does', async () => {
    server = await rawServer(() => {});
    for (const name of ['x a', 'x:a', 'x\r\ny', '']) {
      const error = await rejection(httpRequest(server.url(), { method: 'POST', headers: { [name]: 'b' }, body: '' }));
      expect((error as { code?: string }).code).toBe('ERR_INVALID_HTTP_TOKEN');
    }
    expect(server.connections).toBe(0);
  });

  it('answers httpFetch with a Response carrying the status, headers and body', async () => {
    server = await rawServer((_r, socket) =>
      socket.write('HTTP/1.1 429 Too Many Requests\r\nretry-after: 2\r\ncontent-length: 4\r\n\r\nslow'),
    );
    const response = await httpFetch(server.url('/x').href, { method: 'POST', body: 'b', headers: [['x-k', 'v']] });
    expect([response.status, response.statusText, response.headers.get('retry-after')]).toEqual([
      429,
      'Too Many Requests',
      '2',
    ]);
    expect(await response.text()).toBe('slow');
    expect(server.requests[0]?.head).toContain('x-k: v');
  });
});

describe('httpRequest over TLS, in a process of its own', () => {
  let dir: string;
  let https: ReturnType<typeof createHttpsServer>;
  let url: string;
  let connections = 0;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'proctor-tls-'));
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'],
        ...['-addext', 'subjectAltName=DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      ],
      { stdio: 'ignore' },
    );
    https = createHttpsServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`secure ${req.method} ${req.headers.host}`);
      },
    );
    https.on('connection', () => connections++);
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    url = `https://localhost:${(https.address() as { port: number }).port}/v1`;
  });
  afterAll(async () => {
    https.closeAllConnections();
    await new Promise((resolve) => https.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  // A child process: the CA is trusted there through NODE_EXTRA_CA_CERTS, and the process must exit by itself
  // with a connection idle in the pool.
  const runClient = (): Promise<{ code: number | null; out: string }> =>
    new Promise((resolve) => {
      const script = `
        import { httpRequest } from './src/targets/http-fetch.ts';
        const url = new URL(process.argv[1]);
        for (let i = 0; i < 2; i++) {
          const reply = await httpRequest(url, { method: 'GET', headers: {} });
          console.log(reply.status, reply.body.toString());
        }`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, url], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.on('close', (code) => resolve({ code, out }));
    });

  it('verifies the server by name, reuses the connection, and leaves the process free to exit', async () => {
    const { code, out } = await runClient();
    const host = new URL(url).host;
    expect(out.trim().split('\n')).toEqual([`200 secure GET ${host}`, `200 secure GET ${host}`]);
    expect(code).toBe(0);
    expect(connections).toBe(1);
  }, 30_000);
});
