import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { InputError, type SourcePosition } from '../errors.js';
import { type Path, Source } from './source.js';
import { aliasProblem } from './yaml-aliases.js';
import { type Place, parseYamlBlock, type YamlBlock } from './yaml-block.js';

/** `yaml`'s document of a text, whose nodes keep their ranges. */
interface FullDocument {
  root: Node | null;
  lines: LineCounter;
}

/**
 * A YAML (or JSON) text that keeps every node's range, so an error about any value names its exact line and
 * column. `lineOffset` places a fragment (one JSONL line) inside its file. Plain block YAML is read by
 * yaml-block.ts, which keeps only where each node starts; `yaml`'s document (ten times the cost) is built only
 * for a text outside that subset, or when a position the fast read did not keep is asked for.
 */
export class YamlSource extends Source {
  private lineStarts: LineCounter | undefined;

  private constructor(
    display: string,
    value: unknown,
    private readonly text: string,
    private readonly lineOffset: number,
    private readonly block: YamlBlock | undefined,
    private full: FullDocument | undefined,
  ) {
    super(display, value);
  }

  /** Parses `text`; a syntax error is an InputError at the offending character. */
  static parse(display: string, text: string, lineOffset = 0): YamlSource {
    const block = parseYamlBlock(text);
    if (block) return new YamlSource(display, block.value, text, lineOffset, block, undefined);
    const full = parseFull(display, text, lineOffset);
    // The aliases were bounded by parseFull, with a position to report; yaml's own count would refuse a large
    // suite that shares one anchor a thousand times, without saying where.
    return new YamlSource(display, full.doc.toJS({ maxAliasCount: -1 }), text, lineOffset, undefined, full);
  }

  pos(path: Path, which: 'key' | 'value' = 'value'): SourcePosition {
    const fast = this.block && blockOffset(this.block.place, path, which);
    let line: number;
    let col: number;
    if (fast !== undefined) {
      this.lineStarts ??= countLines(this.text);
      ({ line, col } = this.lineStarts.linePos(fast));
    } else {
      this.full ??= parseFull(this.display, this.text, this.lineOffset);
      ({ line, col } = this.full.lines.linePos(fullOffset(this.full.root, path, which)));
    }
    return { file: this.display, line: line + this.lineOffset, col };
  }
}

const parseFull = (
  display: string,
  text: string,
  lineOffset: number,
): FullDocument & { doc: ReturnType<typeof parseDocument> } => {
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
  return { doc, root: doc.contents, lines };
};

/** The lines of `text` as `yaml` counts them while parsing. */
const countLines = (text: string): LineCounter => {
  const lines = new LineCounter();
  lines.addNewLine(0);
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines.addNewLine(at + 1);
  return lines;
};

/** fullOffset over a fast read's places; undefined where it reaches an empty value, whose offset it did not keep. */
const blockOffset = (root: Place, path: Path, which: 'key' | 'value'): number | undefined => {
  let place = root;
  let offset = typeof root === 'number' ? root : root.start;
  for (const [i, seg] of path.entries()) {
    if (typeof place === 'number') break;
    let part: Place | undefined;
    if (place.keys === undefined) {
      if (typeof seg !== 'number') break;
      part = place.parts[seg];
      if (part === undefined) break;
      offset = typeof part === 'number' ? part : part.start;
    } else {
      const k = place.keys.indexOf(String(seg));
      if (k === -1) break;
      part = place.parts[k] as Place;
      const valueStart = typeof part === 'number' ? part : part.start;
      offset = i === path.length - 1 && which === 'key' ? (place.keyStarts?.[k] as number) : valueStart;
    }
    if (offset === -1) return undefined;
    place = part;
  }
  return offset;
};

/** The offset of the node at `path` (or of its key) in `yaml`'s document, else of the nearest enclosing node. */
const fullOffset = (root: Node | null, path: Path, which: 'key' | 'value'): number => {
  let node: unknown = root;
  let offset = rangeStart(root) ?? 0;
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
  return offset;
};

const rangeStart = (node: unknown): number | undefined => {
  if (node === null || typeof node !== 'object' || !('range' in node)) return undefined;
  const range: unknown = node.range;
  return Array.isArray(range) && typeof range[0] === 'number' ? range[0] : undefined;
};
