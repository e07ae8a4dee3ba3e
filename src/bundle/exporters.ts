import { skippedLinesWarning } from './reader.js';
import type { IndexRow } from './row.js';
import type { IndexFacts, RowVisitor } from './row-visitor.js';
import { Spool } from './spool.js';

/** The bundle an exporter reads, and where it reports what it had to skip. */
export interface ExportSource {
  dir: string;
  runId: string;
  warn(message: string): void;
}

/** A piece of an export document: text, or a spool its rows were written to as they streamed past. */
export type ExportPart = string | Spool;

/**
 * An export being built: given the bundle's latest rows one at a time (by a pass of its own, or by the pass that
 * summarises a run), it writes what it renders of them to spools; `document` then gives the whole in order.
 */
export interface ExportPass extends RowVisitor {
  end(index: IndexFacts): void;
  /** The document in pieces, once the pass has ended. */
  document(): Iterable<ExportPart>;
  /** Removes its spools. */
  close(): void;
}

export type Exporter = (source: ExportSource) => ExportPass;

/** An export of `source` that writes its rows to spools, removed on close. */
export abstract class SpooledExport implements ExportPass {
  private readonly spools: Spool[] = [];
  /** What the pass learnt of the index, once it has ended. */
  protected index: IndexFacts = { drifted: false, skippedLines: 0 };

  constructor(protected readonly source: ExportSource) {}

  protected spool(): Spool {
    const spool = new Spool();
    this.spools.push(spool);
    return spool;
  }

  /** Warns of the index's lines that are not rows, as every export does before its document. */
  protected warnSkipped(): void {
    if (this.index.skippedLines) this.source.warn(skippedLinesWarning(this.index.skippedLines));
  }

  abstract visit(row: IndexRow): void;

  end(index: IndexFacts): void {
    this.index = index;
  }

  abstract document(): Iterable<ExportPart>;

  close(): void {
    for (const spool of this.spools.splice(0)) spool.remove();
  }
}

/** The document's bytes in order, a spool's a chunk at a time. */
export function* exportBytes(parts: Iterable<ExportPart>): Generator<string | Buffer> {
  for (const part of parts) {
    if (typeof part === 'string') yield part;
    else yield* part.chunks();
  }
}

interface ExporterEntry {
  description: string;
  load(): Promise<Exporter>;
}

// A new format is one file plus one line here; `--format` choices and help are derived from this object. Each
// exporter is imported only when used, so building the CLI's commands loads none of them.
export const exporters = {
  json: {
    description: 'one JSON document: the summary and the latest row per case',
    load: async () => (await import('./export-json.js')).exportJson,
  },
  jsonl: {
    description: 'the latest row per case, one a line',
    load: async () => (await import('./export-jsonl.js')).exportJsonl,
  },
  junit: {
    description: 'JUnit XML for CI, a testsuite per target',
    load: async () => (await import('./export-junit.js')).exportJunit,
  },
  html: {
    description: 'one self-contained static page',
    load: async () => (await import('./export-html.js')).exportHtml,
  },
  csv: {
    description: 'a spreadsheet, a case per line with the failure reason',
    load: async () => (await import('./export-csv.js')).exportCsv,
  },
  markdown: {
    description: 'the CI job summary: targets and failures',
    load: async () => (await import('./export-markdown.js')).exportMarkdown,
  },
} satisfies Record<string, ExporterEntry>;

export type ExportFormat = keyof typeof exporters;

export const exportFormats = Object.keys(exporters) as ExportFormat[];

export const isExportFormat = (name: string): name is ExportFormat => Object.hasOwn(exporters, name);

/** One line per format, for `--help`. */
export const exportFormatHelp = (): string =>
  exportFormats.map((name) => `${name}: ${exporters[name].description}`).join('; ');
