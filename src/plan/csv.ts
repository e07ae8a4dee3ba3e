/**
 * A small RFC 4180 reader for `tests: file://tests.csv`: no CSV library is installed, and test tables need only
 * quoting, doubled quotes, embedded newlines and CRLF. Each row keeps the line it starts on for error messages.
 */

export interface CsvRow {
  /** 1-based line of the row's first character. */
  line: number;
  cells: string[];
  /** 1-based column where each cell starts, for errors about one cell. */
  cols: number[];
}

export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly col: number,
  ) {
    super(message);
    this.name = 'CsvSyntaxError';
  }
}

/** Parses CSV text into rows; blank lines are skipped so a trailing newline never yields an empty test. */
export const parseCsv = (text: string): CsvRow[] => {
  const rows: CsvRow[] = [];
  const input = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let cells: string[] = [];
  let cols: number[] = [1];
  let cell = '';
  let line = 1;
  let col = 1;
  let rowLine = 1;
  let inQuotes = false;
  let quoteLine = 0;
  let quoteCol = 0;
  let cellWasQuoted = false;

  const endRow = (): void => {
    cells.push(cell);
    const blank = cells.length === 1 && cells[0] === '' && !cellWasQuoted;
    if (!blank) rows.push({ line: rowLine, cells, cols });
    cells = [];
    cols = [1];
    cell = '';
    cellWasQuoted = false;
  };

  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (inQuotes) {
      if (ch === '"') {
        if (input[i + 1] === '"') {
          cell += '"';
          i++;
          col += 2;
          continue;
        }
        inQuotes = false;
        const next = input[i + 1];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          throw new CsvSyntaxError('unexpected character after a closing quote', line, col + 1);
        }
      } else {
        cell += ch;
        if (ch === '\n') {
          line++;
          col = 0;
        }
      }
      col++;
      continue;
    }
    if (ch === '"') {
      if (cell !== '') throw new CsvSyntaxError('a quote inside an unquoted cell', line, col);
      inQuotes = true;
      cellWasQuoted = true;
      quoteLine = line;
      quoteCol = col;
      col++;
    } else if (ch === ',') {
      cells.push(cell);
      cell = '';
      cellWasQuoted = false;
      col++;
      cols.push(col);
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && input[i + 1] === '\n') i++;
      endRow();
      line++;
      col = 1;
      rowLine = line;
    } else {
      cell += ch;
      col++;
    }
  }
  if (inQuotes) throw new CsvSyntaxError('unterminated quoted cell', quoteLine, quoteCol);
  if (cell !== '' || cells.length > 0 || cellWasQuoted) endRow();
  return rows;
};
