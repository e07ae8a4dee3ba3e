import { describe, expect, it } from 'vitest';
import { CsvSyntaxError, parseCsv } from '../../src/plan/csv.js';

describe('parseCsv', () => {
  it('splits plain rows and records where each row and cell starts', () => {
    expect(parseCsv('a,b\n1,22\n')).toEqual([
      { line: 1, cells: ['a', 'b'], cols: [1, 3] },
      { line: 2, cells: ['1', '22'], cols: [1, 3] },
    ]);
  });

  it('handles quoted commas, doubled quotes, embedded newlines and CRLF', () => {
    const rows = parseCsv('q,a\r\n"x, y","say ""hi"""\r\n"two\nlines",z\r\n');
    expect(rows.map((r) => r.cells)).toEqual([
      ['q', 'a'],
      ['x, y', 'say "hi"'],
      ['two\nlines', 'z'],
    ]);
    expect(rows.map((r) => r.line)).toEqual([1, 2, 3]);
  });

  it('keeps empty cells and a quoted empty row, skips blank lines, strips a BOM', () => {
    expect(parseCsv('\ufeffa,b\n\n,\n""\n').map((r) => r.cells)).toEqual([['a', 'b'], ['', ''], ['']]);
  });

  it('parses a last row without a trailing newline', () => {
    expect(parseCsv('a\nlast').map((r) => r.cells)).toEqual([['a'], ['last']]);
  });

  it('reports an unterminated quote where it opened', () => {
    const error = (() => {
      try {
        parseCsv('a,b\n1,"open\nmore');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(CsvSyntaxError);
    expect(error).toMatchObject({ line: 2, col: 3 });
  });

  it('rejects text after a closing quote and a quote inside a bare cell', () => {
    expect(() => parseCsv('"a"b')).toThrow(/after a closing quote/);
    expect(() => parseCsv('ab"c"')).toThrow(/inside an unquoted cell/);
  });
});
