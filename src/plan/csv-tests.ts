import type { JsonObject } from '../records.js';
import { assertionBuilder } from './assertion-spec.js';
import { readCsvTable } from './csv-table.js';
import type { DraftTest } from './load-tests.js';
import { PointSource } from './source.js';
import type { AssertionSpec } from './spec.js';

/**
 * Tests from a CSV table: the header row names the columns, each further row is one test. Columns `id` and
 * `description` set those fields; a column `assert:TYPE` adds `{type: TYPE, value: cell}` when its cell is not
 * empty; every other column is a var (a string).
 */
export const csvTests = (display: string, text: string, evalDir: string): DraftTest[] => {
  const { names, rows } = readCsvTable(display, text);
  const buildAssertion = assertionBuilder(evalDir);
  return rows.map((row) => {
    const cellAt = (i: number) => ({ file: display, line: row.line, col: row.cols[i] ?? 1 });
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
        assert.push(buildAssertion(new PointSource(raw, cellAt(i)), [], raw));
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
