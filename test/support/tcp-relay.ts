import net, { type AddressInfo } from 'node:net';

export interface TcpRelay {
  port: number;
  close(): Promise<void>;
}

/**
 * A relay on 127.0.0.1 to `host:port`: every byte goes on unchanged, and each client connection gets its own
 * `watch` (from `perConnection`) to see what crosses the wire, for counting a client's work rather than timing it.
 */
export const startTcpRelay = async (
  host: string,
  port: number,
  perConnection: () => { fromClient?: (chunk: Buffer) => void; fromServer?: (chunk: Buffer) => void },
): Promise<TcpRelay> => {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    const watch = perConnection();
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(s);
      });
    }
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      watch.fromClient?.(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      client.write(chunk);
      watch.fromServer?.(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
};
