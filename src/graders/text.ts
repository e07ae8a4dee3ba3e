/**
 * A short quoted preview of user text: outputs can be megabytes, and a reason is read on one line. Cut with
 * "...", not "…": one character past Latin-1 makes V8 hold the reason, and every JSON text it goes into
 * (result.json, the store's columns), at two bytes per character, ~16 KB more garbage per case.
 */
export const quote = (text: string, max = 80): string =>
  JSON.stringify(text.length > max ? `${text.slice(0, max)}...` : text);

/** The end of a stream, where a failing script usually says why. */
export const tail = (text: string, max = 400): string => {
  const trimmed = text.trim();
  return trimmed.length > max ? `…${trimmed.slice(-max)}` : trimmed;
};

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
