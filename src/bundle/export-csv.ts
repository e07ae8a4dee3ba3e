import { type Exporter, type ExportPart, SpooledExport } from './exporters.js';
import { failureReason } from './failures.js';
import type { IndexRow } from './row.js';

const header = [
  'eval',
  'test',
  'prompt',
  'target',
  'sample',
  'outcome',
  'score',
  'reason',
  'error_kind',
  'duration_ms',
  'input_tokens',
  'output_tokens',
  'cost_usd',
  'judge_cost_usd',
  'key',
  'run_id',
  'artifacts',
];

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. A leading =, +, - or @
// would run as a formula in a spreadsheet, so such a field is prefixed with a quote mark (OWASP CSV injection).
const field = (value: string | number | null): string => {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

const line = (cells: (string | number | null)[]): string => `${cells.map(field).join(',')}\r\n`;

const cells = (dir: string, row: IndexRow): (string | number | null)[] => [
  row.identity.eval,
  row.identity.test,
  row.identity.prompt,
  row.identity.target,
  row.identity.sample,
  row.outcome,
  row.score,
  row.outcome === 'failed' || row.outcome === 'error' ? failureReason(dir, row) : '',
  row.error?.kind ?? '',
  row.duration_ms,
  row.usage.input_tokens,
  row.usage.output_tokens,
  row.usage.cost_usd,
  // Empty when no judge graded the case; an unknown cost (null) is empty too, never 0.
  row.usage.judge?.cost_usd ?? null,
  row.key,
  row.run_id,
  row.artifacts,
];

class CsvExport extends SpooledExport {
  private readonly rows = this.spool();

  visit(row: IndexRow): void {
    this.rows.write(line(cells(this.source.dir, row)));
  }

  *document(): Generator<ExportPart> {
    this.warnSkipped();
    yield line(header);
    yield this.rows;
  }
}

/** The latest row per case as CSV, one line each, with the failure reason: for spreadsheets and pandas. */
export const exportCsv: Exporter = (source) => new CsvExport(source);
