import { Document, isScalar, type ScalarTag } from 'yaml';

/**
 * Where a node starts (an offset into the text; -1 where a value was left empty, `key:`, whose offset is the full
 * parser's to say): a number for a scalar; for a collection also where its parts are, a mapping's by key.
 */
export type Place = number | CollectionPlace;

export interface CollectionPlace {
  start: number;
  /** A mapping's keys in the order written, and where each starts; absent for a sequence. */
  keys?: string[];
  keyStarts?: number[];
  /** Where each value (of a mapping) or item (of a sequence) is. */
  parts: Place[];
}

/** A document read by `parseYamlBlock`: its plain value, and where each node starts. */
export interface YamlBlock {
  value: unknown;
  place: Place;
}

/** Thrown inside the reader for any text outside the subset it reads; caught at the top, never seen outside. */
class Unread extends Error {}

const unread = (): never => {
  throw new Unread();
};

// The core schema's scalar tags (null, bool, int, float), as `yaml` itself resolves a plain scalar with them.
let scalarTags: ScalarTag[] | undefined;
const resolvePlain = (text: string): unknown => {
  scalarTags ??= new Document().schema.tags.filter(
    (tag): tag is ScalarTag =>
      tag.default === true && tag.test !== undefined && !('collection' in tag && tag.collection),
  );
  const tag = scalarTags.find((t) => t.test?.test(text));
  if (!tag) return text;
  const value: unknown = tag.resolve(text, unread, { intAsBigInt: false });
  return isScalar(value) ? value.value : value;
};

const isBlank = (c: string | undefined): boolean => c === ' ' || c === undefined;
// A plain scalar may not start with these (`-`, `?` and `:` before a space are handled as indicators too).
const indicators = new Set([
  '-',
  '?',
  ':',
  ',',
  '[',
  ']',
  '{',
  '}',
  '#',
  '&',
  '*',
  '!',
  '|',
  '>',
  "'",
  '"',
  '%',
  '@',
  '`',
]);
const flowIndicators = new Set([',', '[', ']', '{', '}']);

/**
 * Reads the plain block YAML that eval files are mostly written in (block mappings and sequences; plain, quoted
 * and block scalars; one-line flow collections) ten times faster than `yaml` builds its document, which is most
 * of loading an eval of thousands of inline tests. Anything else (anchors, tags, multi-line flow or quoted
 * scalars, tabs, CRs, several documents, any error) is left to `yaml`: undefined. What it reads it reads as
 * `yaml` does (test/plan/yaml-block.test.ts compares the two).
 */
export const parseYamlBlock = (text: string): YamlBlock | undefined => {
  // Tabs, CRs and other control characters have rules of their own: the full parser's.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters refused
  if (/[\u0000-\u0009\u000b-\u001f\u007f\ufeff]/.test(text)) return undefined;
  try {
    return new BlockReader(text).document();
  } catch (error) {
    if (error instanceof Unread) return undefined;
    throw error;
  }
};

interface Read {
  value: unknown;
  place: Place;
}

class BlockReader {
  private readonly lineStarts: number[] = [];
  private readonly lineEnds: number[] = [];
  /** The current line. */
  private i = 0;

  constructor(private readonly text: string) {
    let at = 0;
    while (at < text.length) {
      const end = text.indexOf('\n', at);
      this.lineStarts.push(at);
      this.lineEnds.push(end === -1 ? text.length : end);
      at = end === -1 ? text.length : end + 1;
    }
  }

  document(): YamlBlock | undefined {
    this.skipBlank();
    if (this.i >= this.lineStarts.length) return undefined;
    // A leading `---` alone on its line opens the one document; any other marker or directive is left to yaml.
    if (this.text.startsWith('---', this.start(this.i)) && this.restBlank(this.start(this.i) + 3)) {
      this.i++;
      this.skipBlank();
      if (this.i >= this.lineStarts.length) return undefined;
    }
    const col = this.indent(this.i);
    const at = this.start(this.i) + col;
    if (this.text.startsWith('---', at) || this.text.startsWith('...', at) || this.text[at] === '%') unread();
    const root = this.isDash(at) ? this.sequence(col) : this.mapping(col, at);
    this.skipBlank();
    if (this.i < this.lineStarts.length) unread();
    return { value: root.value, place: root.place };
  }

  private start(line: number): number {
    return this.lineStarts[line] ?? this.text.length;
  }

  private end(line: number): number {
    return this.lineEnds[line] ?? this.text.length;
  }

  private indent(line: number): number {
    const start = this.start(line);
    let at = start;
    while (this.text[at] === ' ') at++;
    return at - start;
  }

  /** Whether the line holds nothing but spaces and perhaps a comment. */
  private blankLine(line: number): boolean {
    const at = this.start(line) + this.indent(line);
    return at >= this.end(line) || this.text[at] === '#';
  }

  private skipBlank(): void {
    while (this.i < this.lineStarts.length && this.blankLine(this.i)) this.i++;
  }

  private isDash(at: number): boolean {
    return this.text[at] === '-' && this.blankOrEnd(at + 1);
  }

  /** Whether `at` is a space or the end of its line. */
  private blankOrEnd(at: number): boolean {
    const c = this.text[at];
    return c === ' ' || c === '\n' || c === undefined;
  }

  /** Whether the rest of the current line from `at` is spaces, perhaps then a comment. */
  private restBlank(at: number): boolean {
    const end = this.end(this.i);
    let p = at;
    while (p < end && this.text[p] === ' ') p++;
    // A comment starts after a space; `#` right after a value is no comment.
    return p >= end || (this.text[p] === '#' && this.text[p - 1] === ' ');
  }

  private skipSpaces(at: number): number {
    let p = at;
    while (this.text[p] === ' ') p++;
    return p;
  }

  /** The next node when a value's line ends after its indicator: nested below `parent`, else empty. */
  private nested(parent: number, indentless: boolean): Read {
    this.i++;
    this.skipBlank();
    if (this.i >= this.lineStarts.length) return { value: null, place: -1 };
    const col = this.indent(this.i);
    const at = this.start(this.i) + col;
    if (col > parent) return this.isDash(at) ? this.sequence(col) : this.mapping(col, at);
    if (col === parent && indentless && this.isDash(at)) return this.sequence(col);
    return { value: null, place: -1 };
  }

  /** After a node: the next line that holds something belongs to a node at most `col` deep. */
  private settle(col: number): void {
    this.skipBlank();
    if (this.i < this.lineStarts.length && this.indent(this.i) > col) unread();
  }

  private sequence(col: number): Read {
    const items: unknown[] = [];
    const parts: Place[] = [];
    const first = this.start(this.i) + col;
    while (this.i < this.lineStarts.length && this.indent(this.i) === col) {
      const dash = this.start(this.i) + col;
      if (!this.isDash(dash)) break;
      const at = this.skipSpaces(dash + 1);
      let item: Read;
      if (this.restBlank(at)) item = this.nested(col, false);
      else if (this.isDash(at)) return unread();
      else if (this.keyEnd(at) !== undefined) item = this.mapping(at - this.start(this.i), at);
      else {
        item = this.inline(at, col);
        this.settle(col);
      }
      items.push(item.value);
      parts.push(item.place);
    }
    return { value: items, place: { start: first, parts } };
  }

  private mapping(col: number, first: number): Read {
    const map: Record<string, unknown> = {};
    const keys: string[] = [];
    const keyStarts: number[] = [];
    const parts: Place[] = [];
    let at = first;
    for (;;) {
      const key = this.key(at);
      if (key.text === '__proto__' || key.text === '<<' || Object.hasOwn(map, key.text)) unread();
      const valueAt = this.skipSpaces(key.end);
      let value: Read;
      if (this.restBlank(valueAt)) value = this.nested(col, true);
      else {
        value = this.inline(valueAt, col);
        this.settle(col);
      }
      map[key.text] = value.value;
      keys.push(key.text);
      keyStarts.push(key.start);
      parts.push(value.place);
      if (this.i >= this.lineStarts.length || this.indent(this.i) !== col) break;
      at = this.start(this.i) + col;
      if (this.isDash(at)) break;
    }
    return { value: map, place: { start: first, keys, keyStarts, parts } };
  }

  /** Where a plain key starting at `at` ends (its `:`), if the line is a `key: …` line. */
  private keyEnd(at: number): number | undefined {
    const c = this.text[at];
    if (c === '"' || c === "'") {
      const close = this.quotedEnd(at);
      return close !== undefined && this.text[this.skipSpaces(close)] === ':' ? close : undefined;
    }
    if (!this.plainStarts(at, false)) return undefined;
    const end = this.end(this.i);
    for (let p = at; p < end; p++) {
      const ch = this.text[p];
      if (ch === ':' && this.blankOrEnd(p + 1)) return p;
      if (ch === '#' && this.text[p - 1] === ' ') return undefined;
    }
    return undefined;
  }

  private key(at: number): { text: string; start: number; end: number } {
    const c = this.text[at];
    let text: string;
    let colon: number;
    if (c === '"' || c === "'") ({ text, colon } = this.quotedKey(at));
    else {
      if (!this.plainStarts(at, false)) unread();
      colon = this.keyEnd(at) ?? unread();
      text = this.plainKey(at, colon);
    }
    // yaml refuses an implicit key past 1,024 characters.
    if (colon - at > 1024 || !this.blankOrEnd(colon + 1)) unread();
    return { text, start: at, end: colon + 1 };
  }

  /** A quoted key at `at`: its text, and where the `:` after it is. */
  private quotedKey(at: number): { text: string; colon: number } {
    const [read, close] = this.quotedScalar(at);
    const colon = this.skipSpaces(close);
    if (this.text[colon] !== ':') unread();
    return { text: read.value as string, colon };
  }

  /** A plain key's text from `at` to its `:`; only one that `yaml` would read as a string. */
  private plainKey(at: number, colon: number): string {
    const text = this.text.slice(at, colon).trimEnd();
    if (typeof resolvePlain(text) !== 'string') unread();
    return text;
  }

  /** The quoted scalar at `at`, and the offset just past its closing quote. */
  private quotedScalar(at: number): [Read, number] {
    const close = this.quotedEnd(at) ?? unread();
    return [{ value: this.quoted(at, close), place: at }, close];
  }

  /** The offset just past the closing quote of the quoted scalar at `at`, on its line; else undefined. */
  private quotedEnd(at: number): number | undefined {
    const quote = this.text[at];
    const end = this.end(this.i);
    for (let p = at + 1; p < end; p++) {
      const ch = this.text[p];
      if (quote === '"' && ch === '\\') p++;
      else if (ch === quote) {
        if (quote === "'" && this.text[p + 1] === "'") p++;
        else return p + 1;
      }
    }
    return undefined;
  }

  private quoted(at: number, close: number): string {
    const body = this.text.slice(at + 1, close - 1);
    if (this.text[at] === "'") return body.replaceAll("''", "'");
    if (!body.includes('\\')) return body;
    // Of YAML's escapes, the ones JSON shares mean the same; JSON.parse refuses the others.
    try {
      return JSON.parse(`"${body}"`) as string;
    } catch {
      return unread();
    }
  }

  /** A value that starts on the current line at `at`, in a node `parent` deep; the line is then consumed. */
  private inline(at: number, parent: number): Read {
    const c = this.text[at];
    if (c === '|' || c === '>') return this.blockScalar(at, parent);
    let read: Read;
    let after: number;
    if (c === '[' || c === '{') [read, after] = this.flow(at);
    else if (c === '"' || c === "'") [read, after] = this.quotedScalar(at);
    else {
      if (!this.plainStarts(at, false)) unread();
      const end = this.plainEnd(at, this.end(this.i), false);
      const text = this.text.slice(at, end).trimEnd();
      read = { value: resolvePlain(text), place: at };
      after = end;
    }
    if (!this.restBlank(after)) unread();
    this.i++;
    return read;
  }

  /** Whether a plain scalar may start at `at`: not at an indicator, unless `-`, `?` or `:` before text. */
  private plainStarts(at: number, inFlow: boolean): boolean {
    const c = this.text[at];
    if (c === undefined) return false;
    if (!indicators.has(c)) return true;
    const next = this.text[at + 1];
    return (
      (c === '-' || c === '?' || c === ':') && !this.blankOrEnd(at + 1) && !(inFlow && flowIndicators.has(next ?? ''))
    );
  }

  /** Where a plain scalar starting at `at` ends: at a comment, at the line's end, at a flow indicator in a flow. */
  private plainEnd(at: number, end: number, inFlow: boolean): number {
    for (let p = at; p < end; p++) {
      const ch = this.text[p] ?? '';
      if (ch === '#' && this.text[p - 1] === ' ') return p;
      if (ch === ':') {
        const next = this.text[p + 1];
        // `key: value` inside a value is a mapping where none may start.
        if (isBlank(next) || next === '\n') return inFlow ? p : unread();
        if (inFlow && flowIndicators.has(next ?? '')) return p;
      }
      if (inFlow && flowIndicators.has(ch)) return p;
    }
    return end;
  }

  /** A one-line flow collection at `at`: its value and the offset after it. */
  private flow(at: number): [Read, number] {
    const end = this.end(this.i);
    const open = this.text[at];
    const close = open === '[' ? ']' : '}';
    const seq: unknown[] = [];
    const map: Record<string, unknown> = {};
    const keys: string[] = [];
    const keyStarts: number[] = [];
    const parts: Place[] = [];
    let p = this.skipSpaces(at + 1);
    while (this.text[p] !== close) {
      if (p >= end) unread();
      if (open === '[') {
        const [item, next] = this.flowValue(p, end);
        seq.push(item.value);
        parts.push(item.place);
        p = this.skipSpaces(next);
        // `[a: b]` is a mapping inside the sequence.
        if (this.text[p] === ':') unread();
      } else {
        const keyAt = p;
        let text: string;
        const c = this.text[p];
        if (c === '"' || c === "'") ({ text, colon: p } = this.quotedKey(p));
        else {
          if (!this.plainStarts(p, true)) unread();
          const keyEnd = this.plainEnd(p, end, true);
          if (this.text[keyEnd] !== ':' || !isBlank(this.text[keyEnd + 1])) unread();
          text = this.plainKey(p, keyEnd);
          p = keyEnd;
        }
        if (text === '__proto__' || text === '<<' || Object.hasOwn(map, text)) unread();
        p = this.skipSpaces(p + 1);
        if (this.text[p] === ',' || this.text[p] === '}') unread();
        const [value, next] = this.flowValue(p, end);
        map[text] = value.value;
        keys.push(text);
        keyStarts.push(keyAt);
        parts.push(value.place);
        p = this.skipSpaces(next);
      }
      if (this.text[p] === ',') p = this.skipSpaces(p + 1);
      else if (this.text[p] !== close) unread();
    }
    const place: CollectionPlace = open === '[' ? { start: at, parts } : { start: at, keys, keyStarts, parts };
    return [{ value: open === '[' ? seq : map, place }, p + 1];
  }

  private flowValue(at: number, end: number): [Read, number] {
    const c = this.text[at];
    if (c === '[' || c === '{') return this.flow(at);
    if (c === '"' || c === "'") return this.quotedScalar(at);
    if (!this.plainStarts(at, true)) unread();
    const stop = this.plainEnd(at, end, true);
    if (this.text[stop] === '#') unread();
    const text = this.text.slice(at, stop).trimEnd();
    return [{ value: resolvePlain(text), place: at }, stop];
  }

  /** `|` or `>` at `at`, with an optional chomping indicator; its lines are those more indented than `parent`. */
  private blockScalar(at: number, parent: number): Read {
    const style = this.text[at];
    let p = at + 1;
    const chomp = this.text[p] === '-' || this.text[p] === '+' ? this.text[p++] : '';
    if (!this.restBlank(p)) unread();
    this.i++;
    const lines = this.lineStarts.length;
    // Leading empty lines, then the content's indentation: its first line's.
    let first = this.i;
    while (first < lines && this.start(first) + this.indent(first) >= this.end(first)) first++;
    if (first >= lines) unread();
    const col = this.indent(first);
    if (col <= parent) unread();
    for (let l = this.i; l < first; l++) if (this.end(l) - this.start(l) > col) unread();
    const parts: (string | null)[] = [];
    for (let l = this.i; l < first; l++) parts.push(null);
    let last = 0;
    let l = first;
    for (; l < lines; l++) {
      const start = this.start(l);
      const end = this.end(l);
      const indent = this.indent(l);
      if (start + indent >= end) {
        // An empty line; one with spaces past the content's indentation holds those spaces, which is left to yaml.
        if (end - start > col) unread();
        parts.push(null);
        continue;
      }
      if (indent < col) break;
      // The last line of the file must end with a line break: a chomped end without one is left to yaml.
      if (end >= this.text.length) unread();
      const content = this.text.slice(start + col, end);
      // A more-indented line of a folded scalar keeps its line breaks: left to yaml.
      if (style === '>' && content.startsWith(' ')) unread();
      parts.push(content);
      last = parts.length;
    }
    this.i = l;
    const body = parts.slice(0, last);
    const text = style === '|' ? body.map((part) => part ?? '').join('\n') : folded(body);
    if (chomp === '-') return { value: text, place: at };
    return { value: `${text}\n${chomp === '+' ? '\n'.repeat(parts.length - last) : ''}`, place: at };
  }
}

/** A folded scalar's lines (null: empty) as one text: lines of text joined by a space, each empty line a break. */
const folded = (body: readonly (string | null)[]): string => {
  let text = '';
  let breaks = 0;
  let started = false;
  for (const part of body) {
    if (part === null) {
      breaks++;
      continue;
    }
    if (!started) text += '\n'.repeat(breaks);
    else text += breaks === 0 ? ' ' : '\n'.repeat(breaks);
    text += part;
    started = true;
    breaks = 0;
  }
  return text;
};
