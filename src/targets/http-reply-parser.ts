// An HTTP/1.1 response read off a socket, byte by byte as it arrives: the status line and headers, then a body
// framed by content-length, chunked transfer coding, or the connection's end. It exists so http-fetch.ts can
// skip node:http's ClientRequest and IncomingMessage streams, which cost a model call about 0.18 ms of CPU.
import type { IncomingHttpHeaders } from 'node:http';

/** A response that is not HTTP/1.x: `code` as Node's own parser names its failures. */
export class HttpParseError extends Error {
  constructor(
    readonly code: 'HPE_INVALID_RESPONSE' | 'HPE_HEADER_OVERFLOW' | 'HPE_INVALID_CHUNK_SIZE',
    message: string,
  ) {
    super(message);
    this.name = 'HttpParseError';
  }
}

/** Node's own limit (--max-http-header-size): a head past it is no answer a client should keep reading. */
const maxHeadBytes = 16 * 1024;
const crlfcrlf = Buffer.from('\r\n\r\n');
const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;
// Statuses whose response has no body whatever its headers say (RFC 9112 §6.3).
const bodyless = (status: number): boolean => status === 204 || status === 304 || (status >= 100 && status < 200);

type Framing = 'length' | 'chunked' | 'close';
type Stage = 'head' | 'body' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'done';

export class HttpReplyParser {
  status = 0;
  statusText = '';
  /** Lower-case names; set-cookie a list, other repeated headers joined with ", " (as node:http gives them). */
  headers: IncomingHttpHeaders = {};
  /** True once the whole response is read and the connection may carry another request. */
  reusable = false;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private stage: Stage = 'head';
  private framing: Framing = 'close';
  /** Body bytes still due: of the content-length, or of the current chunk. */
  private remaining = 0;
  /** Bytes of a head or of a chunk-size or trailer line that arrived split across reads. */
  private pending: Buffer | undefined;
  private keepAlive = true;
  /** Set when the server's Keep-Alive header names how long it keeps an idle connection (ms). */
  idleTimeoutMs: number | undefined;

  /** `head`: the request was HEAD, so the response has no body whatever its headers say. */
  constructor(private readonly head = false) {}

  get done(): boolean {
    return this.stage === 'done';
  }

  /** The body read so far. */
  body(): Buffer {
    return this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.size);
  }

  /** Reads the next bytes; true once the response is complete. Bytes past its end make the connection unusable. */
  push(data: Buffer): boolean {
    let chunk = this.pending ? Buffer.concat([this.pending, data]) : data;
    this.pending = undefined;
    while (chunk.length > 0 && this.stage !== 'done') chunk = this.step(chunk);
    if (chunk.length > 0) this.reusable = false;
    return this.stage === 'done';
  }

  /** The connection ended: true if that completes the response (a body framed by the connection's end). */
  end(): boolean {
    if (this.stage === 'body' && this.framing === 'close') this.stage = 'done';
    return this.stage === 'done';
  }

  /** Consumes the start of `chunk` and returns what is left of it. */
  private step(chunk: Buffer): Buffer {
    switch (this.stage) {
      case 'head':
        return this.readHead(chunk);
      case 'body':
        return this.readBody(chunk);
      case 'chunk-size':
        return this.readLine(chunk, (line) => this.chunkSize(line));
      case 'chunk-data':
        return this.readBody(chunk);
      case 'chunk-end':
        return this.readLine(chunk, (line) => {
          if (line !== '') throw new HttpParseError('HPE_INVALID_CHUNK_SIZE', 'no line end after a chunk');
          this.stage = 'chunk-size';
        });
      case 'trailers':
        return this.readLine(chunk, (line) => {
          if (line === '') this.finish();
        });
      default:
        return chunk;
    }
  }

  private readHead(chunk: Buffer): Buffer {
    const end = chunk.indexOf(crlfcrlf);
    if (end < 0) {
      if (chunk.length > maxHeadBytes) throw new HttpParseError('HPE_HEADER_OVERFLOW', 'response head too large');
      this.pending = chunk;
      return chunk.subarray(chunk.length);
    }
    if (end > maxHeadBytes) throw new HttpParseError('HPE_HEADER_OVERFLOW', 'response head too large');
    const lines = chunk.toString('latin1', 0, end).split('\r\n');
    const match = statusLine.exec(lines[0] as string);
    if (!match) throw new HttpParseError('HPE_INVALID_RESPONSE', 'not an HTTP/1.x status line');
    const status = Number(match[2]);
    this.status = status;
    this.statusText = match[3] ?? '';
    this.headers = {};
    const headers = this.headers;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i] as string;
      const colon = line.indexOf(':');
      if (colon <= 0) throw new HttpParseError('HPE_INVALID_RESPONSE', 'a header line without a name');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      const had = headers[name];
      if (name === 'set-cookie') headers[name] = [...((had as string[] | undefined) ?? []), value];
      else headers[name] = had === undefined ? value : `${had as string}, ${value}`;
    }
    const rest = chunk.subarray(end + 4);
    // An interim response (100 Continue, 103 Early Hints) comes before the real one.
    if (status < 200 && status !== 101) return rest;
    this.frame(match[1] === '1');
    return rest;
  }

  /** How the body is delimited, and whether the connection can be reused after it. */
  private frame(http11: boolean): void {
    const connection = (this.headers.connection as string | undefined)?.toLowerCase() ?? '';
    // After a 101 the connection speaks another protocol.
    this.keepAlive =
      this.status !== 101 && (http11 ? !connection.includes('close') : connection.includes('keep-alive'));
    const hint = /\btimeout=(\d+)/.exec((this.headers['keep-alive'] as string | undefined) ?? '')?.[1];
    this.idleTimeoutMs = hint === undefined ? undefined : Number(hint) * 1000;
    const coding = (this.headers['transfer-encoding'] as string | undefined)?.toLowerCase();
    const length = this.headers['content-length'] as string | undefined;
    if (this.head || bodyless(this.status)) {
      this.finish();
    } else if (coding !== undefined) {
      // A coding other than a final chunked one is delimited by the connection's end (RFC 9112 §6.3).
      if (/(?:^|,)\s*chunked\s*$/.test(coding)) {
        this.framing = 'chunked';
        this.stage = 'chunk-size';
      } else {
        this.framing = 'close';
        this.stage = 'body';
      }
    } else if (length !== undefined) {
      if (!/^\d+$/.test(length)) throw new HttpParseError('HPE_INVALID_RESPONSE', `bad content-length ${length}`);
      this.framing = 'length';
      this.remaining = Number(length);
      if (this.remaining === 0) this.finish();
      else this.stage = 'body';
    } else {
      this.framing = 'close';
      this.stage = 'body';
    }
  }

  private readBody(chunk: Buffer): Buffer {
    if (this.framing === 'close') {
      this.keep(chunk);
      return chunk.subarray(chunk.length);
    }
    const take = Math.min(this.remaining, chunk.length);
    this.keep(take === chunk.length ? chunk : chunk.subarray(0, take));
    this.remaining -= take;
    if (this.remaining === 0) {
      if (this.framing === 'length') this.finish();
      else this.stage = 'chunk-end';
    }
    return chunk.subarray(take);
  }

  private keep(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  /** Hands `onLine` the next CRLF-ended line, or keeps a partial line for the next read. */
  private readLine(chunk: Buffer, onLine: (line: string) => void): Buffer {
    const end = chunk.indexOf('\r\n');
    if (end < 0) {
      if (chunk.length > maxHeadBytes) throw new HttpParseError('HPE_HEADER_OVERFLOW', 'chunk line too long');
      this.pending = chunk;
      return chunk.subarray(chunk.length);
    }
    onLine(chunk.toString('latin1', 0, end));
    return chunk.subarray(end + 2);
  }

  private chunkSize(line: string): void {
    // Chunk extensions (after ";") carry nothing a client needs.
    const hex = line.split(';', 1)[0]?.trim() ?? '';
    if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw new HttpParseError('HPE_INVALID_CHUNK_SIZE', `bad chunk size ${hex}`);
    this.remaining = Number.parseInt(hex, 16);
    this.stage = this.remaining === 0 ? 'trailers' : 'chunk-data';
  }

  private finish(): void {
    this.stage = 'done';
    this.reusable = this.keepAlive;
  }
}
