import type { IncomingHttpHeaders } from 'node:http';
import net, { type Socket } from 'node:net';
import { idleWhenDone } from '../abort-pool.js';
import { tls } from '../node-modules.js';
import { HttpReplyParser } from './http-reply-parser.js';

/** An HTTP token (RFC 9110): a method or a header name, as node:http checks them. */
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What a header value may not hold (node:http's check): a control character other than tab (CR, LF), or DEL. */
const headerValueRefused = /[^\t\x20-\x7e\x80-\xff]/;

const invalid = (message: string, code: string): TypeError => Object.assign(new TypeError(message), { code });

// Statuses whose Response must not carry a body.
const bodyless = new Set([101, 204, 205, 304]);

const headerRecord = (headers: RequestInit['headers']): Record<string, string> => {
  if (!headers) return {};
  if (headers instanceof Headers) return Object.fromEntries(headers.entries());
  if (Array.isArray(headers)) return Object.fromEntries(headers);
  return headers as Record<string, string>;
};

/** A request as one buffer out and one buffer back. */
export interface HttpRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  signal?: AbortSignal | undefined;
}

export interface HttpReply {
  status: number;
  statusText: string;
  /** Lower-case names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What a call rejects with when its signal aborts: the error node:http and `fetch` give. */
const abortError = (signal: AbortSignal): Error => {
  const error = new Error('The operation was aborted', { cause: signal.reason });
  error.name = 'AbortError';
  return Object.assign(error, { code: 'ABORT_ERR' });
};

/** The connection ended before the response did: node:http's words, and the code model-errors.ts reads. */
const hangUp = (midBody: boolean): Error =>
  Object.assign(new Error(midBody ? 'aborted' : 'socket hang up'), { code: 'ECONNRESET' });

// Headers the connection owns: a caller's own would contradict the framing written here.
const framingHeaders = new Set(['content-length', 'transfer-encoding', 'connection', 'host']);

/** A caller's header block as request lines; `latin1`: a value has bytes past ASCII, which node:http sends as latin1. */
interface HeaderBlock {
  lines: string;
  host: string | undefined;
  latin1: boolean;
}

/**
 * Checked as node:http checks them (no CR or LF smuggled into a value), and kept per headers object, so an
 * endpoint that sends the same object every call (openai-chat.ts, the http target) renders it once.
 */
const headerBlocks = new WeakMap<Record<string, string>, HeaderBlock>();
const blockOf = (headers: Record<string, string>): HeaderBlock => {
  let block = headerBlocks.get(headers);
  if (block) return block;
  let lines = '';
  let host: string | undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (!token.test(name)) throw invalid(`invalid HTTP header name ${JSON.stringify(name)}`, 'ERR_INVALID_HTTP_TOKEN');
    if (headerValueRefused.test(value)) throw invalid(`invalid character in header "${name}"`, 'ERR_INVALID_CHAR');
    const lower = name.toLowerCase();
    if (lower === 'host') host = value;
    else if (!framingHeaders.has(lower)) lines += `${name}: ${value}\r\n`;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is every ASCII byte
  block = { lines, host, latin1: /[^\x00-\x7f]/.test(lines + (host ?? '')) };
  headerBlocks.set(headers, block);
  return block;
};

/** One socket to an origin, taking one request at a time. Its listeners are set once, not per request. */
class Connection {
  private exchange: Exchange | undefined;
  /** When it went back to the pool (performance.now()), and how long the server said it keeps it idle. */
  idleSince = 0;
  idleTimeoutMs: number | undefined;

  /** `streamed`: the socket hands its bytes to 'data' listeners (TLS), not to `received` through `onread`. */
  constructor(
    readonly socket: Socket,
    private readonly pool: Connection[],
    streamed: boolean,
  ) {
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 1000);
    if (streamed) socket.on('data', (data: Buffer) => this.received(data));
    socket.on('error', (error) => this.exchange?.fail(error));
    socket.on('close', () => {
      this.exchange?.closed();
      const at = pool.indexOf(this);
      if (at >= 0) pool.splice(at, 1);
    });
  }

  received(data: Buffer): void {
    // Bytes while idle answer no request: the connection is out of step.
    if (this.exchange) this.exchange.data(data);
    else this.socket.destroy();
  }

  start(exchange: Exchange): void {
    this.exchange = exchange;
    this.socket.ref();
  }

  /** Back to the pool once its response is whole, or closed when it cannot carry another. */
  finish(reusable: boolean, idleTimeoutMs: number | undefined): void {
    this.exchange = undefined;
    // node:http's agent keeps at most 256 idle sockets per origin, and none the server will drop within a second.
    const keep =
      reusable &&
      this.socket.writableLength === 0 &&
      this.pool.length < 256 &&
      (idleTimeoutMs === undefined || idleTimeoutMs > 1000);
    if (!keep) {
      this.socket.destroy();
      return;
    }
    // An idle socket must not keep the process alive.
    this.socket.unref();
    this.idleSince = performance.now();
    this.idleTimeoutMs = idleTimeoutMs;
    this.pool.push(this);
  }

  /** Still usable: open, and not idle for as long as the server said it keeps a connection. */
  fresh(now: number): boolean {
    if (this.socket.destroyed || !this.socket.writable) return false;
    return this.idleTimeoutMs === undefined || now - this.idleSince < this.idleTimeoutMs - 1000;
  }
}

/**
 * The exchanges in flight under each signal, which one 'abort' listener per signal fails: a call adds itself and
 * removes itself from a set, where a listener of its own cost an EventTarget's add and its slower remove per call
 * (~1% of a 5,000-case eval run's profile, where each case's signal makes one call).
 */
const inFlight = new WeakMap<AbortSignal, Set<Exchange>>();

const watch = (signal: AbortSignal, exchange: Exchange): void => {
  let exchanges = inFlight.get(signal);
  if (!exchanges) {
    const watched = new Set<Exchange>();
    inFlight.set(signal, watched);
    // Failing a call destroys its socket: that is what tells the server the caller has gone. Left on the signal,
    // idle once its calls are settled: a runner may hand the signal to its next run (abort-pool.ts).
    signal.addEventListener(
      'abort',
      idleWhenDone(() => {
        for (const e of watched) e.fail(abortError(signal));
      }),
    );
    exchanges = watched;
  }
  exchanges.add(exchange);
};

/** One request and its response on a connection. */
class Exchange {
  private readonly parser: HttpReplyParser;
  private settled = false;

  constructor(
    private readonly connection: Connection,
    method: string,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (reply: HttpReply) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.parser = new HttpReplyParser(method === 'HEAD');
    if (signal) watch(signal, this);
  }

  data(data: Buffer): void {
    let done: boolean;
    try {
      done = this.parser.push(data);
    } catch (error) {
      this.connection.socket.destroy();
      this.fail(error as Error);
      return;
    }
    if (done) this.complete();
  }

  closed(): void {
    if (this.parser.end()) this.complete();
    else this.fail(hangUp(this.parser.status >= 200));
  }

  fail(error: Error): void {
    if (!this.settle()) return;
    this.connection.socket.destroy();
    this.reject(error);
  }

  private complete(): void {
    if (!this.settle()) return;
    const parser = this.parser;
    this.connection.finish(parser.reusable, parser.idleTimeoutMs);
    this.resolve({
      status: parser.status,
      statusText: parser.statusText,
      headers: parser.headers,
      body: parser.body(),
    });
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (this.signal) inFlight.get(this.signal)?.delete(this);
    return true;
  }
}

/** Idle connections per origin, the most recently used last (reused first, as node:http's agent does). */
const pools = new Map<string, Connection[]>();
/** The last TLS session per origin, so a new connection resumes it instead of a full handshake. */
const sessions = new Map<string, Buffer>();
/** The one buffer every plain connection reads into (`onread`): a read is copied out before the next can land. */
let readBuffer: Buffer | undefined;

const connect = (url: URL, pool: Connection[]): Connection => {
  const https = url.protocol === 'https:';
  const port = Number(url.port) || (https ? 443 : 80);
  // An IPv6 literal comes bracketed in a URL and bare to connect().
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!https) {
    // Read through `onread`, not the socket's readable stream: each read is handed over as it lands, without the
    // stream's push, 'data' event and read-ahead tick (bench/http-client.ts, http-request: 65-74 -> 58-63 us of CPU).
    readBuffer ??= Buffer.allocUnsafe(64 * 1024);
    let connection: Connection | undefined;
    const onread = {
      buffer: readBuffer,
      // Copied out: the next read on any connection lands in the same buffer. Into a slice of Node's buffer pool:
      // Buffer.copyBytesFrom took ~4x as long.
      callback: (bytes: number, buffer: Uint8Array): boolean => {
        const data = Buffer.allocUnsafe(bytes);
        data.set(buffer.subarray(0, bytes));
        connection?.received(data);
        return true;
      },
    };
    connection = new Connection(net.connect({ port, host, onread }), pool, false);
    return connection;
  }
  const session = sessions.get(url.origin);
  const socket = tls().connect({
    host,
    port,
    ...(net.isIP(host) ? {} : { servername: host }),
    ALPNProtocols: ['http/1.1'],
    ...(session ? { session } : {}),
  });
  socket.on('session', (next: Buffer) => sessions.set(url.origin, next));
  return new Connection(socket, pool, true);
};

const connectionTo = (url: URL): Connection => {
  let pool = pools.get(url.origin);
  if (!pool) {
    pool = [];
    pools.set(url.origin, pool);
  }
  const now = performance.now();
  for (let idle = pool.pop(); idle; idle = pool.pop()) {
    if (idle.fresh(now)) return idle;
    idle.socket.destroy();
  }
  return connect(url, pool);
};

/**
 * One HTTP/1.1 request on a keep-alive connection, the reply buffered whole. Node 20's built-in fetch spends
 * about 0.7 ms of CPU per request in its stream machinery and node:http about 0.28 ms in ClientRequest, its
 * agent and the IncomingMessage stream; writing the request and reading the reply straight off the socket costs
 * about 0.1 ms (bench/http-client.ts). No proxy, like node:http; no timeout of its own: the target's bounds it.
 */
export const httpRequest = (url: URL, init: HttpRequest): Promise<HttpReply> =>
  new Promise((resolve, reject) => {
    const signal = init.signal;
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    // node:http's normalisation and check: a method is sent upper-cased, and is one token.
    const method = init.method.toUpperCase();
    if (!token.test(method)) {
      reject(invalid(`invalid HTTP method ${method}`, 'ERR_INVALID_HTTP_TOKEN'));
      return;
    }
    const { lines, host, latin1 } = blockOf(init.headers);
    const body = init.body;
    const length = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    const framing =
      body === undefined && (method === 'GET' || method === 'HEAD') ? '' : `content-length: ${length}\r\n`;
    const head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${host ?? url.host}\r\n${lines}${framing}connection: keep-alive\r\n\r\n`;
    const connection = connectionTo(url);
    connection.start(new Exchange(connection, method, signal, resolve, reject));
    const socket = connection.socket;
    // One write, so the request leaves in one packet when it fits.
    if (body === undefined) socket.write(head, latin1 ? 'latin1' : 'utf8');
    else if (typeof body === 'string' && !latin1) socket.write(head + body);
    else {
      socket.cork();
      socket.write(head, latin1 ? 'latin1' : 'utf8');
      socket.write(body);
      socket.uncork();
    }
  });

/** A reply's headers as one string each (repeated ones joined), as `fetch` and the SDK's errors carry them. */
export const replyHeaders = (headers: IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
};

/** A `fetch` over httpRequest, for the AI SDK's providers: one request body out, one buffered response back. */
export const httpFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
  const body = init.body;
  const reply = await httpRequest(new URL(typeof input === 'string' || input instanceof URL ? input : input.url), {
    method: init.method ?? 'GET',
    headers: headerRecord(init.headers),
    body: typeof body === 'string' || body instanceof Uint8Array ? body : undefined,
    signal: init.signal ?? undefined,
  });
  return new Response(bodyless.has(reply.status) ? null : reply.body, {
    status: reply.status,
    statusText: reply.statusText,
    headers: replyHeaders(reply.headers),
  });
};
