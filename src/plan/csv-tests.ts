import { InputError } from '../errors.js';
import type { JsonObject } from '../records.js';
import { buildAssertion } from './assertion-spec.js';
import { CsvSyntaxError, parseCsv } from './csv.js';
import type { DraftTest } from './load-tests.js';
import { PointSource } from './source.js';
import type { AssertionSpec } from './spec.js';

/**
 * Tests from a CSV table: the header row names the columns, each further row is one test. Columns `id` and
 * `description` set those fields; a column `assert:TYPE` adds `{type: TYPE, value: cell}` when its cell is not
 * empty; every other column is a var (a string).
 */
export const csvTests = (display: string, text: string, evalDir: string): DraftTest[] => {
  let rows: ReturnType<typeof parseCsv>;
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

  return data.map((row) => {
    const cellAt = (i: number) => ({ file: display, line: row.line, col: row.cols[i] ?? 1 });
    if (row.cells.length !== names.length) {
      throw new InputError(
        `row has ${row.cells.length} cells but the header has ${names.length}`,
        { file: display, line: row.line, col: 1 },
        'give every row one cell per column (quote cells that contain ",")',
      );
    }
    const vars: JsonObject = {};
    const assert: AssertionSpec[] = [];
    let id: string | undefined;
    let description: string | undefined;
    row.cells.forEach((cell, i) => {
      const name = names[i] ?? '';
      if (name === 'id') id = cell.trim() || undefined;
      else if (name === 'description') description = cell || undefined;
      else if (name.startsWith('assert:')) {
        if (cell === '') return;
        const raw = { type: name.slice('assert:'.length), value: cell };
        assert.push(buildAssertion(new PointSource(raw, cellAt(i)), [], raw, evalDir));
      } else vars[name] = cell;
    });
    const where = cellAt(Math.max(0, names.indexOf('id')));
    const source = new PointSource(vars, names.includes('id') ? where : { ...where, col: 1 });
    return {
      source,
      path: [],
      ...(id !== undefined ? { id } : {}),
      ...(description !== undefined ? { description } : {}),
      vars,
      assert,
      where: { file: display, line: row.line, col: 1 },
    };
  });
};
