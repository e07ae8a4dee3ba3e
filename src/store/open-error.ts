/**
 * The store a url names cannot be opened, for a reason its user can fix (no server there, a path that cannot
 * be created): the command reports it as bad input at the url, without a stack.
 */
export class StoreOpenError extends Error {
  constructor(
    readonly kind: 'unreachable' | 'cannot_create',
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'StoreOpenError';
  }
}

/** One line saying why an open failed: a connection to a name with several addresses fails with an empty message. */
export const openFailure = (error: unknown): string => {
  if (error instanceof AggregateError && !error.message) {
    return [...new Set(error.errors.map((e: unknown) => openFailure(e)))].join('; ');
  }
  const text =
    error instanceof Error ? error.message || ((error as NodeJS.ErrnoException).code ?? error.name) : String(error);
  return text.replace(/\s+/g, ' ').trim();
};
