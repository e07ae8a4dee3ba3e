import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 1024 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 1024 }),
};

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

/**
 * One request over node:http with keep-alive sockets, the reply buffered whole. Node 20's built-in fetch spends
 * about 0.7 ms of CPU per request in its stream machinery, more than the rest of a case costs; a model call
 * needs none of it.
 */
export const httpRequest = (url: URL, init: HttpRequest): Promise<HttpReply> =>
  new Promise((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const request = transport.request(
      url,
      {
        method: init.method,
        headers: init.headers,
        agent: agents[url.protocol as keyof typeof agents],
        ...(init.signal ? { signal: init.signal } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 500,
            statusText: response.statusMessage ?? '',
            headers: response.headers,
            body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(init.body);
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
