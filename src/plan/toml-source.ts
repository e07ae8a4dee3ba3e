import { parse, TomlError } from 'smol-toml';
import { InputError, type SourcePosition } from '../errors.js';
import { type Path, Source } from './source.js';

/**
 * proctor.toml, parsed. smol-toml gives positions only for syntax errors, so a value's line is found by a scan
 * of the text for `[table]` headers and `key =` lines: good enough for hand-written config files.
 */
export class TomlSource extends Source {
  private readonly entries: { key: string[]; line: number; col: number }[];

  private constructor(display: string, value: unknown, text: string) {
    super(display, value);
    this.entries = scan(text);
  }

  static parse(display: string, text: string): TomlSource {
    try {
      return new TomlSource(display, parse(text), text);
    } catch (error) {
      if (!(error instanceof TomlError)) throw error;
      const message = (error.message.split('\n')[0] ?? error.message).replace(/^Invalid TOML document: /, '');
      throw new InputError(
        `invalid TOML: ${message}`,
        { file: display, line: error.line, col: error.column },
        'check the quoting and brackets here (TOML strings need quotes; tables are written [name])',
      );
    }
  }

  pos(path: Path): SourcePosition {
    let best: { line: number; col: number; depth: number } | undefined;
    for (const entry of this.entries) {
      if (entry.key.length > path.length) continue;
      if (!entry.key.every((k, i) => k === String(path[i]))) continue;
      if (!best || entry.key.length > best.depth) best = { line: entry.line, col: entry.col, depth: entry.key.length };
      if (best.depth === path.length) break;
    }
    return best ? { file: this.display, line: best.line, col: best.col } : { file: this.display };
  }
}

const splitKey = (key: string): string[] =>
  [...key.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|([^.\s]+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');

const scan = (text: string): { key: string[]; line: number; col: number }[] => {
  const entries: { key: string[]; line: number; col: number }[] = [];
  let table: string[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const header = /^(\s*)\[\[?\s*([^\]]+?)\s*\]\]?/.exec(raw);
    if (header) {
      table = splitKey(header[2] ?? '');
      entries.push({ key: table, line: i + 1, col: (header[1]?.length ?? 0) + 1 });
      continue;
    }
    const assign = /^(\s*)((?:"[^"]*"|'[^']*'|[A-Za-z0-9_.\- ]+?))\s*=/.exec(raw);
    if (assign)
      entries.push({ key: [...table, ...splitKey(assign[2] ?? '')], line: i + 1, col: (assign[1]?.length ?? 0) + 1 });
  }
  return entries;
};
