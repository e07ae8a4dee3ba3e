// Characters XML 1.0 cannot carry at all, even escaped: C0 controls but tab, newline and carriage return,
// lone surrogates, U+FFFE and U+FFFF. A CI parser rejects the whole report for one of them in an output.
const notXmlChar =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this regex's purpose.
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const entities: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '\n': '&#10;',
  '\r': '&#13;',
  '\t': '&#9;',
};

/** Text for an XML attribute value: quotes escaped, and whitespace as references so a parser keeps it. */
export const xmlAttr = (text: string): string =>
  text.replace(notXmlChar, '\uFFFD').replace(/[&<>"'\n\r\t]/g, (c) => entities[c] as string);

/** Text for XML element content. */
export const xmlText = (text: string): string =>
  text.replace(notXmlChar, '\uFFFD').replace(/[&<>]/g, (c) => entities[c] as string);

/** Text for HTML content or a quoted attribute: every user-controlled string goes through here. */
export const html = (text: string): string => text.replace(/[&<>"']/g, (c) => entities[c] as string);
