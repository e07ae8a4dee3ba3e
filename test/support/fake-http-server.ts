// A plain HTTP endpoint on 127.0.0.1 whose answers a test scripts: an in-house agent for the http target.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './fake-model-server.js';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface FakeHttpServer {
  readonly url: string;
  readonly requests: readonly SeenRequest[];
  close(): Promise<void>;
}

/** Answers each request with `handle` (called after the body is read; it may delay or never answer). */
export const startFakeHttpServer = async (
  handle: (req: SeenRequest, res: ServerResponse) => void,
): Promise<FakeHttpServer> => {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(seen);
      handle(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
