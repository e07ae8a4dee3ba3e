import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { forEachRowHead } from '../../src/bundle/reader.js';
import { writeSummary } from '../../src/bundle/summary.js';
import { removeBundles, writeBundle } from './fixture.js';

afterAll(removeBundles);

const bundleOf = (evalPaths: readonly string[]): string =>
  writeBundle(evalPaths.map((path, i) => ({ test: `t${i}`, outcome: 'passed', eval: path })));

describe('forEachRowHead', () => {
  // The reader reuses the previous row's eval path when the bytes are the same: paths of one length, paths that
  // differ in one byte, and the empty path must each still read as written.
  it('reads each row’s eval path as written, whatever the rows before it named', () => {
    const paths = ['a.eval.yaml', 'a.eval.yaml', 'b.eval.yaml', 'a.eval.yaml', 'evals/ü.eval.yaml', '', 'a.eval.yml'];
    const seen: (string | undefined)[] = [];
    forEachRowHead(bundleOf(paths), (head) => seen.push(head.evalPath));
    expect(seen).toEqual(paths);
    const again: (string | undefined)[] = [];
    forEachRowHead(bundleOf(['b.eval.yaml', 'a.eval.yaml']), (head) => again.push(head.evalPath));
    expect(again).toEqual(['b.eval.yaml', 'a.eval.yaml']);
  });
});

describe('a row without usage (a bundle edited by hand, or written by another tool)', () => {
  it('is tallied with its spend unknown, not a crash of the summary', () => {
    const dir = writeBundle([
      { test: 't0', outcome: 'passed' },
      { test: 't1', outcome: 'failed' },
    ]);
    const index = join(dir, 'index.jsonl');
    const [first, second] = readFileSync(index, 'utf8').trim().split('\n');
    const bare = JSON.parse(first as string) as Record<string, unknown>;
    delete bare.usage;
    writeFileSync(index, `${JSON.stringify(bare)}\n${second}\n`);
    const summary = writeSummary(dir, 'r');
    expect(summary.counts).toMatchObject({ passed: 1, failed: 1 });
    expect(summary.usage.cost_usd).toBeNull();
  });
});
