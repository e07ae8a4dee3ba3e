import { appendFileSync, cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import type { IndexRow } from '../../src/bundle/row.js';
import type { Summary } from '../../src/bundle/summary.js';
import { bundleResultText } from '../support/bundle-result.js';
import { runCli } from '../support/cli.js';
import { type TempProject, tempProject } from '../support/project.js';

// The per-byte sweep is test/bundle/torn-row.test.ts; here the CLI at a few telling offsets of a real row.
const evalText = `targets: [{ kind: echo }]
prompts: ["{{ word }}"]
tests:
  - { id: one, vars: { word: apple }, assert: [{ type: equals, value: apple }] }
  - { id: two, vars: { word: pear }, assert: [{ type: equals, value: pear }] }
  - { id: bad, vars: { word: plum }, assert: [{ type: equals, value: nope }] }
`;

let p: TempProject;
let rows: string[];
beforeAll(async () => {
  p = tempProject({ 'a.eval.yaml': evalText });
  expect((await runCli(['eval', 'run', '-q', '-o', 'whole'], { cwd: p.dir })).code).toBe(1);
  rows = p.read('whole/index.jsonl').trimEnd().split('\n');
  // The failed case last, as if the crash hit while its row was written.
  rows.sort((a, b) => Number(a.includes('"outcome":"failed"')) - Number(b.includes('"outcome":"failed"')));
});
afterAll(() => p.remove());

const run = (...args: string[]) => runCli(args, { cwd: p.dir });
/** A case's result.json in the bundle as the run wrote it. */
const wholeResult = (key: string): string =>
  bundleResultText(p.path('whole'), readIndex(p.path('whole')).rows.find((r) => r.key === key) ?? {});
const warning = /1 line\(s\) of .*index\.jsonl are not complete rows \(a torn write\); ignored/;

describe('a real row torn after its outcome', () => {
  const failed = () => rows.at(-1) as string;
  const cuts = {
    'right after the outcome': () => failed().indexOf('"outcome":"failed"') + '"outcome":"failed"'.length,
    'inside the artifacts path': () => failed().indexOf('"artifacts":"') + '"artifacts":"cases/'.length,
    'inside its result place': () => failed().length - 4,
    'one byte short': () => failed().length - 1,
  };
  for (const [name, at] of Object.entries(cuts)) {
    it(`${name}: show, export and compare skip it with a warning; --resume restores it from the store`, async () => {
      rmSync(p.path('out'), { recursive: true, force: true });
      cpSync(p.path('whole'), p.path('out'), { recursive: true });
      writeFileSync(p.path('out/index.jsonl'), `${rows.slice(0, -1).join('\n')}\n${failed().slice(0, at())}`);

      const show = await run('results', 'show', 'out');
      expect(show.code, show.stderr).toBe(0);
      expect(show.stderr).toMatch(warning);
      expect(show.stdout).not.toMatch(/bad · p1/);
      const json = JSON.parse((await run('results', 'show', 'out', '--json')).stdout) as Summary;
      expect(json).toMatchObject({ counts: { total: 2, passed: 2, failed: 0 }, skipped_lines: 1 });
      const exported = await run('results', 'export', 'out', '--format', 'jsonl');
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stderr).toMatch(warning);
      expect(exported.stdout.trimEnd().split('\n')).toHaveLength(2);
      // The torn case has no result in `out`: the gate counts it lost, so compare fails until --resume reruns it.
      const compared = await run('results', 'compare', 'whole', 'out');
      expect(compared.code, compared.stderr).toBe(1);
      expect(compared.stderr).toMatch(warning);
      expect(compared.stdout).toMatch(/only in base \(1\)/);
      expect(compared.stdout).toMatch(/GATE FAILED: 1 case\(s\) lost/);

      // The store holds what the torn row said: --resume writes it back before selecting, and runs nothing.
      const resumed = await run('eval', 'run', '--resume', 'out');
      expect(resumed.stderr).toContain('1 committed result(s) written from the store');
      expect(resumed.stderr).toContain('Resume: found 3 existing result(s), skipping 3 completed.');
      expect(resumed.code, resumed.stderr).toBe(0);
      // The torn tail was never a complete row: cut off, and the committed result stands in its place.
      const after = readIndex(p.path('out'));
      expect(after.skipped).toEqual([]);
      expect(after.rows.map((r) => r.identity.test).sort()).toEqual(['bad', 'one', 'two']);
      const summary = JSON.parse(readFileSync(p.path('out/summary.json'), 'utf8')) as Summary;
      expect(summary).toMatchObject({ counts: { total: 3, passed: 2, failed: 1 }, skipped_lines: 0 });
      // The same row, its result packed again after what the bundle held.
      const { result_at: _, ...bad } = after.rows.find((r) => r.identity.test === 'bad') as IndexRow;
      const { result_at: __, ...was } = JSON.parse(failed()) as IndexRow;
      expect(bad).toEqual(was);
      expect(after.rows.map((r) => bundleResultText(p.path('out'), r))).toEqual(
        after.rows.map((r) => wholeResult(r.key)),
      );
    });
  }
});

// The bundle writer packs a page's results in one write, then appends their rows: a crash between the two (or
// during the first) leaves bytes at the end of results.jsonl that no row names. The next writer starts on a line
// of its own after them, and the rows it writes name their results there.
describe('torn bytes at the end of results.jsonl, no row for them', () => {
  it('are read by nothing; --resume appends after them and every row reads its result', async () => {
    rmSync(p.path('out'), { recursive: true, force: true });
    cpSync(p.path('whole'), p.path('out'), { recursive: true });
    const failed = JSON.parse(rows.at(-1) as string) as IndexRow;
    const torn = wholeResult(failed.key);
    appendFileSync(p.path('out/results.jsonl'), torn.slice(0, torn.length / 2));
    writeFileSync(p.path('out/index.jsonl'), `${rows.slice(0, -1).join('\n')}\n`);

    const show = await run('results', 'show', 'out');
    expect(show.code, show.stderr).toBe(0);
    expect(show.stderr).toBe('');
    expect(show.stdout).not.toMatch(/bad/);
    const json = JSON.parse((await run('results', 'show', 'out', '--json')).stdout) as Summary;
    expect(json).toMatchObject({ counts: { total: 2, passed: 2, failed: 0 }, skipped_lines: 0 });

    const resumed = await run('eval', 'run', '--resume', 'out');
    expect(resumed.stderr).toContain('1 committed result(s) written from the store');
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = readIndex(p.path('out')).rows;
    expect(after.map((r) => r.identity.test).sort()).toEqual(['bad', 'one', 'two']);
    for (const r of after) expect(bundleResultText(p.path('out'), r), r.identity.test).toBe(wholeResult(r.key));
    // Its result was packed after the torn bytes, on a line of its own.
    const bad = after.find((r) => r.identity.test === 'bad') as IndexRow;
    expect(bad.result_at?.[0]).toBeGreaterThan(readFileSync(p.path('whole/results.jsonl')).length + torn.length / 2);
    // The failure's reason comes from its result.json.
    expect((await run('results', 'show', 'out')).stdout).toMatch(/bad/);
  });
});
