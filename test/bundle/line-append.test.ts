import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendLines } from '../../src/bundle/line-append.js';

describe('appendLines', () => {
  let dir: string;
  let file: string;
  let fd: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'line-append-'));
    file = join(dir, 'lines.jsonl');
    fd = openSync(file, 'a+');
  });
  afterEach(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes each text on its own line and gives each line its length in bytes, multi-byte characters included', () => {
    const texts = ['{"a":1}', '{"q":"“ünïcödé” 🧪"}', '{}'];
    const lengths = appendLines(fd, texts);
    expect(lengths).toEqual(texts.map((t) => Buffer.byteLength(t)));
    expect(readFileSync(file, 'utf8')).toBe(`${texts.join('\n')}\n`);
  });

  it('appends after what is there, and a smaller append after a larger one writes only its own bytes', () => {
    const large = Array.from({ length: 300 }, (_, i) => `{"case":${i},"text":"${'🧪x'.repeat(200 + (i % 7))}"}`);
    appendLines(fd, large);
    const small = ['{"b":2}'];
    expect(appendLines(fd, small)).toEqual([7]);
    expect(readFileSync(file, 'utf8')).toBe(`${[...large, ...small].join('\n')}\n`);
  });

  it('takes a text larger than the buffer it keeps between appends (6 MB of 3-byte characters)', () => {
    const huge = `{"t":"${'€'.repeat(2 * 1024 * 1024)}"}`;
    const lengths = appendLines(fd, ['{"c":0}', huge, '{"c":2}']);
    expect(lengths).toEqual([7, Buffer.byteLength(huge), 7]);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines).toEqual(['{"c":0}', huge, '{"c":2}', '']);
    expect(appendLines(fd, ['{"d":3}'])).toEqual([7]);
    expect(readFileSync(file, 'utf8').endsWith('{"c":2}\n{"d":3}\n')).toBe(true);
  });

  it('writes nothing for no texts', () => {
    expect(appendLines(fd, [])).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe('');
  });
});
