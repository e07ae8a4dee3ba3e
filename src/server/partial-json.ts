/** What a JSON text cut short (or followed by something else) holds up to where it stops being JSON. */
export interface PartialJson {
  value: unknown;
  /** False when the text ended, or stopped being JSON, before the value closed. */
  complete: boolean;
}

const stop = Symbol('stop');
const literals: [string, unknown][] = [
  ['true', true],
  ['false', false],
  ['null', null],
];
const escapes: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const numberAt = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Parses as much of `text` as is JSON: a container still open where the text stops is closed there, a string
 * keeps the characters it got. The explorer reads only the head of a big artifact (and one cut at the store's
 * cap ends in a marker line), yet shows what that head holds.
 */
export const parsePartialJson = (text: string): PartialJson => {
  let at = 0;
  let complete = true;
  const cut = <T>(v: T): T => {
    complete = false;
    return v;
  };
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at] as string)) at++;
  };
  const string = (): string => {
    let out = '';
    at++;
    for (;;) {
      const quote = text.indexOf('"', at);
      const slash = text.indexOf('\\', at);
      const end = quote < 0 ? text.length : quote;
      if (slash < 0 || slash > end) {
        out += text.slice(at, end);
        if (quote < 0) {
          at = text.length;
          complete = false;
          return out;
        }
        at = quote + 1;
        return out;
      }
      out += text.slice(at, slash);
      const e = text[slash + 1];
      if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(slash + 2, slash + 6))) {
        out += String.fromCharCode(Number.parseInt(text.slice(slash + 2, slash + 6), 16));
        at = slash + 6;
      } else if (e !== undefined && e in escapes) {
        out += escapes[e];
        at = slash + 2;
      } else {
        at = text.length;
        complete = false;
        return out;
      }
    }
  };
  const value = (): unknown => {
    space();
    const c = text[at];
    if (c === '"') return string();
    if (c === '{') {
      const o: Record<string, unknown> = {};
      at++;
      for (;;) {
        space();
        if (text[at] === '}') {
          at++;
          return o;
        }
        if (text[at] !== '"') return cut(o);
        const key = string();
        space();
        if (!complete || text[at] !== ':') return cut(o);
        at++;
        const v = value();
        if (v === stop) return o;
        // A key whose value was cut keeps the part it got: an output string's head is what the page shows.
        Object.defineProperty(o, key, { value: v, enumerable: true, writable: true, configurable: true });
        if (!complete) return o;
        space();
        if (text[at] === ',') at++;
        else if (text[at] !== '}') return cut(o);
      }
    }
    if (c === '[') {
      const a: unknown[] = [];
      at++;
      for (;;) {
        space();
        if (text[at] === ']') {
          at++;
          return a;
        }
        const v = value();
        if (v === stop) return a;
        a.push(v);
        if (!complete) return a;
        space();
        if (text[at] === ',') at++;
        else if (text[at] !== ']') return cut(a);
      }
    }
    for (const [word, v] of literals) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return v;
      }
    }
    numberAt.lastIndex = at;
    const n = numberAt.exec(text);
    // A number that runs into the end of the text may be cut (12 of 123): it is not taken.
    if (n && at + n[0].length < text.length) {
      at += n[0].length;
      return Number(n[0]);
    }
    complete = false;
    return stop;
  };
  const v = value();
  if (complete) space();
  return { value: v === stop ? undefined : v, complete: complete && at === text.length };
};
