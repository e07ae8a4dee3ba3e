import type { AddressInfo } from 'node:net';
import net from 'node:net';

/** A TCP relay on 127.0.0.1 to a server, that a test can cut: the server seems to vanish for good. */
export interface TcpProxy {
  port: number;
  /** Stops listening and drops every relayed connection: new connections are refused. */
  cut(): Promise<void>;
}

export const startTcpProxy = async (host: string, port: number): Promise<TcpProxy> => {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', end);
      s.on('close', end);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
};
