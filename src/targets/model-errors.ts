// Turns what the AI SDK throws into a ProctorError, by error class and HTTP status, never by message text.
// Shared by every AI SDK target (openai, anthropic), so they retry alike.
import {
  APICallError,
  EmptyResponseBodyError,
  InvalidResponseDataError,
  JSONParseError,
  NoContentGeneratedError,
  TypeValidationError,
} from '@ai-sdk/provider';
import { ProctorError } from '../errors.js';

export interface ModelCallFacts {
  url: string;
  /** True when our own timer aborted the call. */
  timedOut: boolean;
  timeoutMs?: number | undefined;
}

/** Socket-level failure codes (Node's and undici's) that mean the endpoint was not reachable or hung up. */
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

const networkCode = (error: unknown): string | undefined => {
  const seen = new Set<unknown>();
  let current = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code: unknown = (current as { code?: unknown }).code;
    if (typeof code === 'string' && networkCodes.has(code)) return code;
    current = current.cause;
  }
  return undefined;
};

/** Retry-After (delta seconds or an HTTP date) or the non-standard retry-after-ms, in ms. */
export const retryAfterMs = (headers: Record<string, string> | undefined, now = Date.now()): number | undefined => {
  if (!headers) return undefined;
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && ms.trim() !== '') {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const value = headers['retry-after']?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
};

const fromApiCallError = (error: APICallError, url: string): ProctorError => {
  const status = error.statusCode;
  if (status === undefined) {
    const code = networkCode(error);
    return new ProctorError('network', `cannot reach ${url}${code ? ` (${code})` : ''}`, { cause: error });
  }
  // An overloaded server (Anthropic's 529, a 503) may say when to come back, as a 429 does.
  const wait = retryAfterMs(error.responseHeaders);
  const after = wait === undefined ? {} : { retryAfterMs: wait };
  if (status === 429) return new ProctorError('rate_limited', `429 from ${url}`, { cause: error, ...after });
  if (status >= 500) return new ProctorError('http_5xx', `${status} from ${url}`, { cause: error, ...after });
  // A 2xx that the SDK could not read: the body was not the JSON the schema expects.
  if (status >= 200 && status < 300) {
    return new ProctorError('malformed_output', `unreadable ${status} response from ${url}`, { cause: error });
  }
  if (status === 408) return new ProctorError('timeout', `408 from ${url}`, { cause: error });
  // Other 4xx (bad key, unknown model, bad request) will fail the same way again: not retryable.
  return new ProctorError('internal', `${status} from ${url}: ${error.message}`, { cause: error });
};

export const classifyModelError = (error: unknown, facts: ModelCallFacts): ProctorError => {
  if (facts.timedOut) {
    return new ProctorError('timeout', `no answer from ${facts.url} within ${facts.timeoutMs} ms`, { cause: error });
  }
  if (error instanceof ProctorError) return error;
  if (APICallError.isInstance(error)) return fromApiCallError(error, facts.url);
  if (
    JSONParseError.isInstance(error) ||
    TypeValidationError.isInstance(error) ||
    InvalidResponseDataError.isInstance(error) ||
    EmptyResponseBodyError.isInstance(error) ||
    NoContentGeneratedError.isInstance(error)
  ) {
    return new ProctorError('malformed_output', `unreadable response from ${facts.url}`, { cause: error });
  }
  const code = networkCode(error);
  if (code) return new ProctorError('network', `cannot reach ${facts.url} (${code})`, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new ProctorError('internal', message, { cause: error });
};
