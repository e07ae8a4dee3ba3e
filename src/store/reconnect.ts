import { sleep } from '../sleep.js';

// SQLSTATE class 08 (connection exception) and 57P01–57P03 (the server shut the session down, or is starting
// up), and the socket errors of a server that went away or is not back yet.
const lostCodes = new Set(['57P01', '57P02', '57P03', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);
// pg reports a socket closed under a query, and the pool a connection it could not make in time, with these
// messages and no code: the message is all there is to tell them by.
const lostMessages = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'timeout exceeded when trying to connect',
];

/** The store stayed out of reach through every retry: the command cannot record or read results any more. */
export class StoreLostError extends Error {
  readonly kind = 'store_lost';
  constructor(cause: unknown) {
    super(
      `lost the connection to the store and could not get it back within ${totalMs / 1000} s: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'StoreLostError';
  }
}

// About 8 s in all: long enough for a server restart or a failover, short enough that a store that is gone
// fails the command instead of hanging it.
const backoffMs = [50, 100, 250, 500, 1000, 2000, 4000];
const totalMs = backoffMs.reduce((a, b) => a + b, 0);

/** Whether `error` says the connection to the store was lost (and a new one may work), not that a statement failed. */
const isConnectionLoss = (error: unknown): boolean => {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (lostCodes.has(code) || code.startsWith('08'))) return true;
  return lostMessages.some((m) => error.message.startsWith(m));
};

/**
 * Runs store operations again, on a new connection, while the connection to the store is lost. The attempt
 * before may have committed just before its answer was lost, so every write retried here must accept its own
 * earlier effect (kysely-store.ts: a claim, journal entry or created run it already made counts as made).
 * Once the store has stayed lost through every retry, every later operation fails at once with that error:
 * the command is going down, and waiting out the retries again for each write would only delay it.
 */
export class Reconnect {
  private lost: StoreLostError | undefined;

  /** Runs `op` (attempt 0, then 1, …) until it succeeds, fails otherwise than by a lost connection, or the retries run out. */
  async run<T>(op: (attempt: number) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.lost) throw this.lost;
      try {
        return await op(attempt);
      } catch (error) {
        if (!isConnectionLoss(error)) throw error;
        const wait = backoffMs[attempt];
        if (wait === undefined) {
          this.lost ??= new StoreLostError(error);
          throw this.lost;
        }
        await sleep(wait);
      }
    }
  }
}
