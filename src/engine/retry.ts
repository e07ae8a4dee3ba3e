import { ProctorError } from '../errors.js';
import { sleep } from '../sleep.js';

export interface RetryPolicy {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const defaultRetryPolicy = (retries: number): RetryPolicy => ({ retries, baseDelayMs: 250, maxDelayMs: 30_000 });

/** Full-jitter exponential backoff; a server's Retry-After wins when it asks for longer. */
const backoffMs = (policy: RetryPolicy, attempt: number, retryAfterMs?: number): number => {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const jittered = exp / 2 + Math.random() * (exp / 2);
  return retryAfterMs !== undefined ? Math.max(retryAfterMs, jittered) : jittered;
};

/**
 * Runs `fn` until it succeeds, throws a non-retryable error, or has been retried `policy.retries` times.
 * `onAttempt` learns each attempt's number so the caller can record how many it took.
 */
export const withRetries = <T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  fn: (attempt: number) => Promise<T>,
  onAttempt: (attempt: number) => void = () => {},
): Promise<T> => {
  // Most first attempts succeed: they are awaited by the caller alone, with no loop of our own around them.
  onAttempt(1);
  return fn(1).catch((error: unknown) => retry(policy, signal, fn, onAttempt, error));
};

/** The attempts after a failed first one, each after its backoff. */
const retry = async <T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  fn: (attempt: number) => Promise<T>,
  onAttempt: (attempt: number) => void,
  firstError: unknown,
): Promise<T> => {
  let error = firstError;
  for (let attempt = 1; ; attempt++) {
    if (!(error instanceof ProctorError) || !error.retryable || attempt > policy.retries || signal.aborted) throw error;
    await sleep(backoffMs(policy, attempt, error.detail.retryAfterMs), signal);
    onAttempt(attempt + 1);
    try {
      return await fn(attempt + 1);
    } catch (next) {
      error = next;
    }
  }
};
