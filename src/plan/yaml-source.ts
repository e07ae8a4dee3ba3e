import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { InputError, type SourcePosition } from '../errors.js';
import { type Path, Source } from './source.js';
import { aliasProblem } from './yaml-aliases.js';

/**
 * A YAML (or JSON) text that keeps every node's range, so an error about any value names its exact line and
 * column. `lineOffset` places a fragment (one JSONL line) inside its file.
 */
export class YamlSource extends Source {
  private constructor(
    display: string,
    value: unknown,
    private readonly root: Node | null,
    private readonly lines: LineCounter,
    private readonly lineOffset: number,
  ) {
    super(display, value);
  }

  /** Parses `text`; a syntax error is an InputError at the offending character. */
  static parse(display: string, text: string, lineOffset = 0): YamlSource {
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
    const [first] = doc.errors;
    if (first) {
      const at = first.linePos?.[0];
      const message = (first.message.split('\n')[0] ?? first.message).replace(/ at line \d+, column \d+:?$/, '');
      throw new InputError(
        `invalid YAML: ${message}`,
        { file: display, line: (at?.line ?? 1) + lineOffset, col: at?.col ?? 1 },
        'check the indentation and quoting here, and that no key appears twice',
      );
    }
    const aliases = aliasProblem(doc.contents);
    if (aliases) {
      const { line, col } = lines.linePos(rangeStart(aliases.node) ?? 0);
      throw new InputError(aliases.message, { file: display, line: line + lineOffset, col }, aliases.hint);
    }
    // The aliases were bounded just above, with a position to report; yaml's own count would refuse a large
    // suite that shares one anchor a thousand times, without saying where.
    return new YamlSource(display, doc.toJS({ maxAliasCount: -1 }), doc.contents, lines, lineOffset);
  }

  pos(path: Path, which: 'key' | 'value' = 'value'): SourcePosition {
    let node: unknown = this.root;
    let offset = rangeStart(this.root) ?? 0;
    for (const [i, seg] of path.entries()) {
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        const keyStart = rangeStart(pair.key);
        // `key:` with nothing after it has no value node: the key is the best place to point.
        const valueStart = rangeStart(pair.value) ?? keyStart;
        offset = (last && which === 'key' ? keyStart : valueStart) ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        const item: unknown = node.items[seg];
        const start = rangeStart(item);
        if (start === undefined) break;
        offset = start;
        node = item;
      } else break;
    }
    const { line, col } = this.lines.linePos(offset);
    return { file: this.display, line: line + this.lineOffset, col };
  }
}

const rangeStart = (node: unknown): number | undefined => {
  if (node === null || typeof node !== 'object' || !('range' in node)) return undefined;
  const range: unknown = node.range;
  return Array.isArray(range) && typeof range[0] === 'number' ? range[0] : undefined;
};
