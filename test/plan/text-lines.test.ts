// A JSONL tests file is read in 1 MB chunks: its lines must be exactly what splitting the whole text gives,
// also where a chunk ends inside a line, between a \r and its \n, or inside a multi-byte character.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { type TextLine, textLines } from '../../src/plan/text-lines.js';
import { type TempProject, tempProject } from '../support/project.js';

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.remove();
});

const read = (text: string): { lines: TextLine[]; bytes: Buffer } => {
  const p = tempProject({ 'f.jsonl': text });
  projects.push(p);
  return { lines: [...textLines(p.path('f.jsonl'))], bytes: readFileSync(p.path('f.jsonl')) };
};

const linesOf = (text: string): { line: string; index: number }[] =>
  read(text).lines.map(({ line, index }) => ({ line, index }));

const split = (text: string): { line: string; index: number }[] =>
  text.split(/\r?\n/).map((line, index) => ({ line, index }));

describe('the lines of a file read in chunks', () => {
  it('are those of the whole text split on \\n and \\r\\n, across chunk boundaries and multi-byte characters', () => {
    // Lines of 1 to 3-byte and 4-byte characters with CRLF and LF endings and a lone \r: over 3 MB, so chunk
    // ends fall at many offsets within lines and characters.
    const lines = Array.from({ length: 35_000 }, (_, i) => {
      const line = `{"i":${i},"t":"${'é€😀a'.repeat(i % 17)}\r${'x'.repeat(i % 5)}"}`;
      return i % 3 === 0 ? `${line}\r\n` : `${line}\n`;
    });
    const text = `${lines.join('')}last line without a newline`;
    expect(Buffer.byteLength(text)).toBeGreaterThan(3 * (1 << 20));
    expect(linesOf(text)).toEqual(split(text));
  });

  it('keep an empty last line, an empty file and a file of blank lines as split does', () => {
    for (const text of ['', '\n', '\r\n\r\n', 'a\r', 'a\n\nb\n']) expect(linesOf(text)).toEqual(split(text));
  });

  it('say where each line is in the file, in bytes: its offset and length read it back', () => {
    // Lines longer than the 1 MB chunk too: the buffer grows to hold one.
    const text = ['a😀\r\n', `${'é'.repeat(700_000)}\n`, '\n', `${'x'.repeat(3_000_000)}\r\n`, 'tail'].join('');
    const { lines, bytes } = read(text);
    expect(lines.map((l) => l.line)).toEqual(text.split(/\r?\n/));
    for (const l of lines) expect(bytes.toString('utf8', l.offset, l.offset + l.bytes)).toBe(l.line);
  });
});
