/** Error kinds of DESIGN.md: everything after the place an error is classified reads `kind`, never the text. */
export const errorKinds = [
  'timeout',
  'rate_limited',
  'http_5xx',
  'network',
  'target_crash',
  'malformed_output',
  'setup_failed',
  'grader_error',
  'budget_exceeded',
  'cassette_miss',
  'internal',
] as const;
export type ErrorKind = (typeof errorKinds)[number];

/** Infrastructure kinds: retried with backoff. A graded failure is an outcome, never one of these. */
const retryableKinds: ReadonlySet<ErrorKind> = new Set([
  'timeout',
  'rate_limited',
  'http_5xx',
  'network',
  'target_crash',
  'setup_failed',
]);

const isRetryable = (kind: ErrorKind): boolean => retryableKinds.has(kind);

/** Facts of an error beyond its kind: how long a server asked to wait, and the error underneath. */
export interface ErrorDetail {
  retryAfterMs?: number;
  cause?: unknown;
  /** What the failed operation had done, kept as its step's output (a verify step's judge calls and their spend). */
  output?: unknown;
}

/** An error leaving a target, grader, step or workspace, classified where the fact is known. */
export class ProctorError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly detail: ErrorDetail = {},
  ) {
    super(message, { cause: detail.cause });
    this.name = 'ProctorError';
  }

  get retryable(): boolean {
    return isRetryable(this.kind);
  }
}

/** A position in a user's file, 1-based, for messages of the form `file:line:col`. */
export interface SourcePosition {
  file: string;
  line?: number;
  col?: number;
}

/** Bad input or usage: the command exits 2 and nothing is run or written. */
export class InputError extends Error {
  constructor(
    message: string,
    readonly where?: SourcePosition,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'InputError';
  }

  /** `file:line:col: message` then the fix on its own line. */
  format(): string {
    const at = this.where
      ? `${this.where.file}${this.where.line ? `:${this.where.line}` : ''}${this.where.col ? `:${this.where.col}` : ''}: `
      : '';
    return `${at}${this.message}${this.hint ? `\n  fix: ${this.hint}` : ''}`;
  }
}

/** The plain form of an error that crosses a seam (store, bundle, queue). */
export interface ErrorRecord {
  kind: ErrorKind;
  message: string;
  retryable: boolean;
}

export const toErrorRecord = (error: unknown): ErrorRecord => {
  if (error instanceof ProctorError) return { kind: error.kind, message: error.message, retryable: error.retryable };
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'internal', message, retryable: false };
};

/** Raised inside an aborted operation so callers can tell cancellation from failure. */
export class CanceledError extends Error {
  constructor(message = 'canceled') {
    super(message);
    this.name = 'CanceledError';
  }
}
