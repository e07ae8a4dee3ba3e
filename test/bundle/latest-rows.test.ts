import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readLatest, startReadLatest } from '../../src/bundle/latest-rows.js';
import { type IndexRow, toIndexRow } from '../../src/bundle/row.js';
import { BundleWriter } from '../../src/bundle/writer.js';
import type { Outcome } from '../../src/records.js';
import { type TempProject, tempProject } from '../support/project.js';

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.remove();
});

interface Case {
  key: string;
  outcome: Outcome;
  fingerprint?: string;
  eval?: string;
}

const rowOf = (c: Case, attempt: number): IndexRow =>
  toIndexRow({
    identity: { eval: c.eval ?? 'a.eval.yaml', test: c.key, prompt: 'p1', target: 'echo', sample: 0 },
    key: c.key,
    fingerprint: c.fingerprint ?? 'f1',
    outcome: c.outcome,
    score: null,
    error: null,
    attempts: 1,
    durationMs: 1,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    runId: `r${attempt}`,
    groupId: 'g',
    startedAt: 0,
    finishedAt: 1,
    artifacts: `cases/${c.key}/${attempt}`,
  });

/** A bundle of rows as the writer writes them: each read from its bytes, not parsed. */
const bundleOf = (cases: readonly Case[]): string => {
  const project = tempProject();
  projects.push(project);
  const dir = project.path('bundle');
  mkdirSync(dir);
  const writer = new BundleWriter(dir);
  for (const [i, c] of cases.entries()) writer.appendLines([JSON.stringify(rowOf(c, i + 1))]);
  writer.close();
  return dir;
};

const append = (dir: string, text: string): void => appendFileSync(join(dir, 'index.jsonl'), text);

describe('readLatest', () => {
  it('counts a key’s rows together whether read from their bytes or parsed, and keeps the last', () => {
    const dir = bundleOf([
      { key: 'a', outcome: 'error' },
      { key: 'b', outcome: 'passed' },
    ]);
    // The same key in a row the reader must parse: fields in another order, as another writer may put them.
    const { key, ...rest } = rowOf({ key: 'a', outcome: 'failed' }, 3);
    append(dir, `${JSON.stringify({ key, ...rest })}\n`);
    append(dir, `${JSON.stringify(rowOf({ key: 'a', outcome: 'passed' }, 4))}\n`);
    const index = readLatest(dir);
    expect([...index.latest.keys()]).toEqual(['a', 'b']);
    expect(index.latest.get('a')).toMatchObject({ rows: 3, outcome: 'passed', fingerprint: 'f1' });
    expect(index.latest.get('b')).toMatchObject({ rows: 1, outcome: 'passed' });
    expect(index.drifted).toBe(false);
    expect(index.pathsDiffer).toBe(false);
  });

  it('sees a fingerprint change in the bytes, and the same non-ASCII fingerprint as unchanged', () => {
    const same = readLatest(
      bundleOf([
        { key: 'a', outcome: 'passed', fingerprint: 'ü1' },
        { key: 'a', outcome: 'failed', fingerprint: 'ü1' },
      ]),
    );
    expect([same.drifted, same.latest.get('a')?.fingerprint]).toEqual([false, 'ü1']);
    const changed = readLatest(
      bundleOf([
        { key: 'a', outcome: 'passed', fingerprint: 'f1' },
        { key: 'b', outcome: 'passed', fingerprint: 'f1' },
        { key: 'a', outcome: 'failed', fingerprint: 'f2' },
      ]),
    );
    expect([changed.drifted, changed.latest.get('a')?.fingerprint, changed.latest.get('b')?.fingerprint]).toEqual([
      true,
      'f2',
      'f1',
    ]);
  });

  it('tells when a key’s rows name different eval paths', () => {
    const index = readLatest(
      bundleOf([
        { key: 'a', outcome: 'passed', eval: 'a.eval.yaml' },
        { key: 'a', outcome: 'failed', eval: '/elsewhere/a.eval.yaml' },
      ]),
    );
    expect([index.pathsDiffer, index.latest.get('a')?.evalPath]).toEqual([true, '/elsewhere/a.eval.yaml']);
  });

  // A torn row whose head (key, fingerprint, outcome) is whole, ended by an older writer's newline: the byte
  // reader would take it for the key's latest row if it did not also require a row's end.
  it('skips a torn row of a key with whole rows, at every cut after its outcome', () => {
    const dir = bundleOf([
      { key: 'a', outcome: 'passed' },
      { key: 'b', outcome: 'passed' },
    ]);
    const whole = readFileSync(join(dir, 'index.jsonl'));
    const torn = Buffer.from(JSON.stringify(rowOf({ key: 'a', outcome: 'failed', fingerprint: 'f2' }, 3)));
    const headEnd = torn.indexOf('"failed"') + '"failed"'.length;
    const next = `${JSON.stringify(rowOf({ key: 'c', outcome: 'error' }, 4))}\n`;
    for (let cut = headEnd; cut < torn.length; cut++) {
      const cutDir = bundleOf([]);
      writeFileSync(
        join(cutDir, 'index.jsonl'),
        Buffer.concat([whole, torn.subarray(0, cut), Buffer.from(`\n${next}`)]),
      );
      const index = readLatest(cutDir);
      expect(
        index.skipped.map((s) => s.line),
        `cut at ${cut}`,
      ).toEqual([3]);
      expect(index.latest.get('a'), `cut at ${cut}`).toMatchObject({ rows: 1, outcome: 'passed', fingerprint: 'f1' });
      expect([index.drifted, index.latest.size], `cut at ${cut}`).toEqual([false, 3]);
    }
  });
});

describe('startReadLatest', () => {
  // A worker runs JavaScript: the built module (npm run build) reads on a thread, as the CLI does.
  const built = (): Promise<typeof import('../../src/bundle/latest-rows.js')> =>
    import(new URL('../../dist/bundle/latest-rows.js', import.meta.url).href);

  it('reads a large index on a worker thread to what the calling thread reads, torn and parsed rows too', async () => {
    const cases: Case[] = [];
    for (let i = 0; i < 20_000; i++) cases.push({ key: `k${i % 3000}`, outcome: i % 7 ? 'passed' : 'failed' });
    cases.push({ key: 'k1', outcome: 'error', fingerprint: 'f2', eval: '/elsewhere/a.eval.yaml' });
    const dir = bundleOf([]);
    const lines = cases.map((c, i) => JSON.stringify(rowOf(c, i + 1)));
    // A row the byte reader rejects (its fields in another order) is parsed, and a torn one is skipped.
    const { key, ...rest } = rowOf({ key: 'k2', outcome: 'error' }, 0);
    lines.push(JSON.stringify({ key, ...rest }), (lines[5] as string).slice(0, 150));
    writeFileSync(join(dir, 'index.jsonl'), `${lines.join('\n')}\n${lines[9]}\n`);
    const pending = (await built()).startReadLatest(dir);
    expect(pending.onThread).toBe(true);
    const index = pending.result();
    expect(index).toEqual(readLatest(dir));
    expect(index.latest.get('k2')).toMatchObject({ outcome: 'error', rows: 8 });
    expect([index.latest.size, index.skipped.length, index.drifted, index.pathsDiffer]).toEqual([3000, 1, true, true]);
  });

  it('reads a small index, or one from TypeScript sources, on the calling thread', () => {
    const dir = bundleOf([{ key: 'a', outcome: 'failed' }]);
    const pending = startReadLatest(dir);
    expect([pending.onThread, pending.result().latest.get('a')?.outcome]).toEqual([false, 'failed']);
  });
});
