import { InputError } from '../errors.js';
import { type CsvRow, CsvSyntaxError, parseCsv } from './csv.js';

/** A CSV file of tests: its column names (trimmed) and its data rows, each with one cell per column. */
export interface CsvTable {
  names: string[];
  header: CsvRow;
  rows: CsvRow[];
}

/**
 * Reads a CSV file of tests (native or promptfoo's): a syntax error, an empty file, an unnamed or repeated
 * column, or a row with another number of cells than the header is an InputError at its position.
 */
export const readCsvTable = (display: string, text: string): CsvTable => {
  let rows: CsvRow[];
  try {
    rows = parseCsv(text);
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    throw new InputError(
      `invalid CSV: ${error.message}`,
      { file: display, line: error.line, col: error.col },
      'quote a cell holding "," or a quote, and double every quote inside it ("")',
    );
  }
  const [header, ...data] = rows;
  if (!header)
    throw new InputError(
      'the CSV file is empty',
      { file: display, line: 1, col: 1 },
      'add a header row naming the vars, then one row per test',
    );
  const names = header.cells.map((c) => c.trim());
  names.forEach((name, i) => {
    const at = { file: display, line: header.line, col: header.cols[i] ?? 1 };
    if (name === '') throw new InputError(`column ${i + 1} has no name`, at, 'name every column in the header row');
    if (names.indexOf(name) !== i) throw new InputError(`duplicate column "${name}"`, at, 'name each column once');
  });
  for (const row of data)
    if (row.cells.length !== names.length)
      throw new InputError(
        `row has ${row.cells.length} cells but the header has ${names.length}`,
        { file: display, line: row.line, col: 1 },
        'give every row one cell per column (quote cells that contain ",")',
      );
  return { names, header, rows: data };
};
