import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Spool } from '../../src/bundle/spool.js';

describe('Spool', () => {
  // Spools go to the OS temporary folder: point it at one of the test's own to see what is left there.
  let dir: string;
  let tmp: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'spool-test-'));
    tmp = process.env.TMPDIR;
    process.env.TMPDIR = dir;
  });
  afterEach(() => {
    if (tmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmp;
    rmSync(dir, { recursive: true, force: true });
  });

  const bytesOf = (spool: Spool): string => Buffer.concat([...spool.chunks()]).toString();

  it('gives back megabytes of pieces byte for byte, multi-byte characters across its chunks, and removes its file', () => {
    const spool = new Spool();
    const pieces = Array.from({ length: 40_000 }, (_, i) => `case ${i} · “ünïcödé” 🧪 ${'x'.repeat(i % 50)}\n`);
    for (const piece of pieces) spool.write(piece);
    expect(readdirSync(dir)).toHaveLength(1);
    expect(bytesOf(spool)).toBe(pieces.join(''));
    spool.remove();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps a small part in memory: no file at all', () => {
    const spool = new Spool();
    spool.write('<testcase/>\n');
    expect(bytesOf(spool)).toBe('<testcase/>\n');
    expect(readdirSync(dir)).toEqual([]);
    spool.remove();
    expect(bytesOf(new Spool())).toBe('');
  });
});
