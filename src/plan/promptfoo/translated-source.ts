import type { SourcePosition } from '../../errors.js';
import { type Path, Source } from '../source.js';

/** Where a part of the translated document came from: a node of the promptfoo file, or of a file it names. */
export interface Origin {
  source: Source;
  path: Path;
}

/** Where each node of a translation came from, keyed by its path in the translation. */
export class Origins {
  private readonly map = new Map<string, Origin>();

  /** Records that the node at `path` of the translation was written at `origin`. */
  set(path: Path, origin: Origin): void {
    this.map.set(JSON.stringify(path), origin);
  }

  get(path: Path): Origin | undefined {
    return this.map.get(JSON.stringify(path));
  }
}

/**
 * A native eval document made from a promptfoo config. Its value is what the native loader reads; its
 * positions are those of the promptfoo files, so an error the loader finds in a translated assertion still
 * names the line and column the user wrote it at.
 */
export class TranslatedSource extends Source {
  constructor(
    private readonly config: Source,
    value: unknown,
    private readonly origins: Origins,
  ) {
    super(config.display, value);
  }

  pos(path: Path, which: 'key' | 'value' = 'value'): SourcePosition {
    for (let n = path.length; n >= 0; n--) {
      const origin = this.origins.get(path.slice(0, n));
      if (origin) return origin.source.pos([...origin.path, ...path.slice(n)], which);
    }
    return this.config.pos([], which);
  }
}
