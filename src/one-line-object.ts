/**
 * Whether `text` is a JSON object on one line, as JSON.stringify writes one without indenting: what a case's
 * result.json is unless the store's cap cut it (its marker line follows) or it was written indented. Only the
 * ends and the line breaks are looked at: the text is the engine's own JSON, never parsed again to check it.
 */
export const isOneLineObject = (text: string): boolean =>
  text.startsWith('{') && text.endsWith('}') && !text.includes('\n');
