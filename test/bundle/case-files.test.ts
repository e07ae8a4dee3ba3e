import { appendFileSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caseFiles, readCaseFile, readResultText } from '../../src/bundle/case-files.js';
import { forEachRowHead } from '../../src/bundle/reader.js';
import { packFile, withResultAt } from '../../src/bundle/result-pack.js';
import type { IndexRow } from '../../src/bundle/row.js';
import { BundleWriter } from '../../src/bundle/writer.js';
import { type TempProject, tempProject } from '../support/project.js';
import { aRow } from './fixture.js';

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.remove();
});

const rowText = (key: string): string => JSON.stringify(aRow(key));

const resultOf = (key: string): string => JSON.stringify({ output: `answer ü ${key}`, steps: [] });

/** A bundle written as a run writes it: `packed` keys have only a result, `foldered` ones a diff too. */
const bundle = (packed: readonly string[], foldered: readonly string[] = []): string => {
  const p = tempProject();
  projects.push(p);
  const dir = p.path('bundle');
  const writer = new BundleWriter(dir);
  for (const key of packed) writer.writeCase(key, 1, { 'result.json': resultOf(key) }, rowText(key));
  for (const key of foldered)
    writer.writeCase(key, 1, { 'result.json': resultOf(key), 'ws.diff': '+x\n' }, rowText(key));
  writer.flush();
  writer.close();
  return dir;
};

const rowsOf = (dir: string): IndexRow[] => {
  const rows: IndexRow[] = [];
  forEachRowHead(dir, (head) => rows.push(head.row()));
  return rows;
};

describe('a case with nothing but its result', () => {
  it('is packed: no folder, its row names its line, and every reader gets its text', () => {
    const dir = bundle(['a', 'b'], ['c']);
    const [a, b, c] = rowsOf(dir);
    expect(readResultText(dir, a as IndexRow)).toBe(resultOf('a'));
    expect(readResultText(dir, b as IndexRow)).toBe(resultOf('b'));
    expect(caseFiles(dir, b as IndexRow)).toEqual([{ name: 'result.json', size: Buffer.byteLength(resultOf('b')) }]);
    expect(readCaseFile(dir, b as IndexRow, 'result.json', 5)).toEqual({
      text: '{"out',
      length: Buffer.byteLength(resultOf('b')),
    });
    expect(readCaseFile(dir, b as IndexRow, 'ws.diff')).toBeUndefined();
    // The case with a diff keeps its folder, result.json in it.
    expect(c?.result_at).toBeUndefined();
    expect(caseFiles(dir, c as IndexRow).map((f) => f.name)).toEqual(['result.json', 'ws.diff']);
    expect(readResultText(dir, c as IndexRow)).toBe(resultOf('c'));
    expect(readFileSync(join(dir, packFile), 'utf8')).toBe(`${resultOf('a')}\n${resultOf('b')}\n`);
  });

  it('rows with a result place are read from their bytes, as rows without one are', () => {
    const dir = bundle(['a'], ['b']);
    const read: [string, boolean][] = [];
    forEachRowHead(dir, (head) => read.push([head.key, head.keyFrom >= 0]));
    expect(read).toEqual([
      ['a', true],
      ['b', true],
    ]);
  });

  it('reads a bundle of folders only (an older Proctor’s) as before', () => {
    const p = tempProject();
    projects.push(p);
    const dir = p.path('old');
    const writer = new BundleWriter(dir);
    writer.writeArtifacts('a', 1, { 'result.json': resultOf('a') });
    writer.appendLines([rowText('a')]);
    writer.close();
    const [a] = rowsOf(dir);
    expect(readResultText(dir, a as IndexRow)).toBe(resultOf('a'));
    expect(caseFiles(dir, a as IndexRow)).toEqual([{ name: 'result.json', size: Buffer.byteLength(resultOf('a')) }]);
  });

  it('reads a place that is out of the pack, not a whole line or not a JSON object as no result.json', () => {
    const dir = bundle(['a', 'b']);
    const [a, b] = rowsOf(dir) as [IndexRow, IndexRow];
    const [offset, bytes] = b.result_at ?? [0, 0];
    const at = (place: unknown): IndexRow => ({ ...a, result_at: place }) as IndexRow;
    const size = readFileSync(join(dir, packFile)).length;
    for (const place of [
      [size, 10],
      [offset, bytes + 1],
      [1_000_000_000, 2],
      [offset + 1, bytes - 1],
      [offset, bytes - 1],
      [0, 0],
      [-1, 5],
      [0.5, 3],
      ['0', '5'],
      [0],
      'x',
      null,
    ]) {
      expect(readResultText(dir, at(place)), JSON.stringify(place)).toBeUndefined();
      expect(caseFiles(dir, at(place)), JSON.stringify(place)).toEqual([]);
    }
    // A whole line that is not a JSON object.
    appendFileSync(join(dir, packFile), '"just a string"\n');
    expect(readResultText(dir, at([size, 15]))).toBeUndefined();
    // A pack that is a link is not followed, whatever it points at.
    const elsewhere = join(dir, '..', 'elsewhere.jsonl');
    writeFileSync(elsewhere, `${resultOf('x')}\n`);
    const linked = join(dir, '..', 'linked');
    const writer = new BundleWriter(linked);
    writer.appendLines([withResultAt(rowText('x'), [0, Buffer.byteLength(resultOf('x'))])]);
    writer.close();
    symlinkSync(elsewhere, join(linked, packFile));
    const [x] = rowsOf(linked);
    expect(readResultText(linked, x as IndexRow)).toBeUndefined();
  });

  it('after torn pack bytes that no row names, the next writer packs on a line of its own', () => {
    const dir = bundle(['a']);
    appendFileSync(join(dir, packFile), '{"output":"torn');
    const writer = new BundleWriter(dir);
    writer.writeCase('b', 1, { 'result.json': resultOf('b') }, rowText('b'));
    writer.flush();
    writer.close();
    expect(rowsOf(dir).map((r) => readResultText(dir, r))).toEqual([resultOf('a'), resultOf('b')]);
  });
});
