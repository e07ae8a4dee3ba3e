import { messageOf } from './text.js';

export type ParsedJson = { ok: true; value: unknown } | { ok: false; error: string };

// V8 echoes the whole input in the message (`Unexpected token 'x', "<output>" is not valid JSON`); the output is
// already quoted, truncated, in the reason, and can be megabytes.
const withoutEcho = (message: string): string =>
  message.replace(/, ".*"(\.\.\.)? is not valid JSON$/s, '').slice(0, 160);

/** JSON.parse without exceptions: a model's non-JSON output is a graded failure, not an error. */
export const parseJson = (text: string): ParsedJson => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: withoutEcho(messageOf(error)) };
  }
};
