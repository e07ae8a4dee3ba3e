/** The bundle an exporter reads, and where it reports what it had to skip. */
export interface ExportSource {
  dir: string;
  runId: string;
  warn(message: string): void;
}

/**
 * Renders a bundle's latest row per case as one document, in pieces: a caller writes each piece as it comes,
 * so a large bundle is never one string.
 */
export type Exporter = (source: ExportSource) => Iterable<string>;

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
