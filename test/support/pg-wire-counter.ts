import { startTcpRelay } from './tcp-relay.js';

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

/**
 * A client's bytes as PostgreSQL frontend messages, each whole: the startup message has no type byte (its type
 * is ''), every later one is a type byte and an int32 length.
 */
export const pgFrontendMessages = (onMessage: (type: string, message: Buffer) => void) => {
  let pending: Buffer = Buffer.alloc(0);
  let started = false;
  return (chunk: Buffer): void => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      const head = started ? 1 : 0;
      if (pending.length < head + 4) break;
      const length = head + pending.readInt32BE(head);
      if (pending.length < length) break;
      onMessage(started ? String.fromCharCode(pending[0] as number) : '', pending.subarray(0, length));
      started = true;
      pending = pending.subarray(length);
    }
  };
};

export const startPgWireCounter = async (host: string, port: number): Promise<PgWireCounter> => {
  const counter = {
    port: 0,
    statements: 0,
    bytesBack: 0,
    reset: () => {
      counter.statements = 0;
      counter.bytesBack = 0;
    },
    close: async () => relay.close(),
  };
  const relay = await startTcpRelay(host, port, () => ({
    fromClient: pgFrontendMessages((type) => {
      if (type === 'Q' || type === 'E') counter.statements++;
    }),
    fromServer: (chunk) => {
      counter.bytesBack += chunk.length;
    },
  }));
  counter.port = relay.port;
  return counter;
};
