// A JSONL tests file is read in 1 MB chunks: its lines must be exactly what splitting the whole text gives,
// also where a chunk ends inside a line, between a \r and its \n, or inside a multi-byte character.
import { afterAll, describe, expect, it } from 'vitest';
import { textLines } from '../../src/plan/text-lines.js';
import { type TempProject, tempProject } from '../support/project.js';

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.remove();
});

const linesOf = (text: string): { line: string; index: number }[] => {
  const p = tempProject({ 'f.jsonl': text });
  projects.push(p);
  return [...textLines(p.path('f.jsonl'))];
};

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
});
