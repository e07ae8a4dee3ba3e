import { startTcpRelay } from './tcp-relay.js';

/** A TCP relay on 127.0.0.1 to a server, that a test can cut: the server seems to vanish for good. */
export interface TcpProxy {
  port: number;
  /** Stops listening and drops every relayed connection: new connections are refused. */
  cut(): Promise<void>;
}

export const startTcpProxy = async (host: string, port: number): Promise<TcpProxy> => {
  const relay = await startTcpRelay(host, port, () => ({}));
  return { port: relay.port, cut: relay.close };
};
