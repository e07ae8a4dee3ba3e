/** `text` as one single-quoted /bin/sh word: commands built from a promptfoo config never re-parse it. */
export const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;
