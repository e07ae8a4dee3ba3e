import type { AddressInfo } from 'node:net';
import net from 'node:net';

/**
 * A relay to a PostgreSQL server that counts what crosses the wire: the statements its clients execute (a
 * simple Query or an extended-protocol Execute message each) and the bytes the server sends back. A test reads
 * how much work a store call did from these counts, not from its time.
 */
export interface PgWireCounter {
  port: number;
  /** Statements executed since the last reset. */
  statements: number;
  /** Bytes the server sent since the last reset. */
  bytesBack: number;
  reset(): void;
  close(): Promise<void>;
}

export const startPgWireCounter = async (host: string, port: number): Promise<PgWireCounter> => {
  const sockets = new Set<net.Socket>();
  const counter = {
    port: 0,
    statements: 0,
    bytesBack: 0,
    reset: () => {
      counter.statements = 0;
      counter.bytesBack = 0;
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(s);
      });
    }
    // The startup message has no type byte; every later frontend message is a type byte and an int32 length.
    let pending = Buffer.alloc(0);
    let started = false;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const head = started ? 1 : 0;
        if (pending.length < head + 4) break;
        const length = head + pending.readInt32BE(head);
        if (pending.length < length) break;
        const type = started ? String.fromCharCode(pending[0] as number) : '';
        if (type === 'Q' || type === 'E') counter.statements++;
        started = true;
        pending = pending.subarray(length);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      counter.bytesBack += chunk.length;
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  counter.port = (server.address() as AddressInfo).port;
  return counter;
};
