import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FailureList } from '../../src/bundle/failures.js';
import { LatestFold } from '../../src/bundle/latest-fold.js';
import { RepeatTally } from '../../src/bundle/repeats.js';
import { toIndexRow } from '../../src/bundle/row.js';
import { type Summary, SummaryTally, writeSummary } from '../../src/bundle/summary.js';
import { BundleWriter } from '../../src/bundle/writer.js';
import type { Outcome } from '../../src/records.js';
import { type TempProject, tempProject } from '../support/project.js';

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.remove();
});

const newDir = (): string => {
  const project = tempProject();
  projects.push(project);
  return project.path('bundle');
};

interface Case {
  test: string;
  outcome: Outcome;
  target?: string;
  sample?: number;
  fingerprint?: string;
}

let attempt = 0;

/**
 * Appends the cases as rows, each with a score, duration and cost of its own (sums that depend on their order);
 * returns the lines appended.
 */
const append = (dir: string, cases: readonly Case[], groupId = 'g1'): string[] => {
  const writer = new BundleWriter(dir);
  const lines: string[] = [];
  for (const c of cases) {
    attempt++;
    const target = c.target ?? 'echo';
    const key = `${c.test}-${target}-${c.sample ?? 0}`;
    const line = JSON.stringify(
      toIndexRow({
        identity: { eval: 'a.eval.yaml', test: c.test, prompt: 'p1', target, sample: c.sample ?? 0 },
        key,
        fingerprint: c.fingerprint ?? 'f',
        outcome: c.outcome,
        score: c.outcome === 'passed' ? 1 : c.outcome === 'failed' ? 0.1 * (attempt % 7) : null,
        error: null,
        attempts: 1,
        durationMs: 3 + ((attempt * 37) % 101),
        usage: { inputTokens: attempt, outputTokens: 2, costUsd: 0.1 + 0.01 * (attempt % 13) },
        runId: `r${attempt}`,
        groupId,
        startedAt: 0,
        finishedAt: 10,
        artifacts: `cases/${key}/${attempt}`,
      }),
    );
    writer.appendLines([line]);
    lines.push(line);
  }
  writer.close();
  return lines;
};

/** What the report and the summary keep of a pass; only the summary's clock may differ. */
const visitors = () => ({ tally: new SummaryTally(), failures: new FailureList(3), repeats: new RepeatTally() });
type Visitors = ReturnType<typeof visitors>;

const outputs = (v: Visitors, summary: Summary) => ({
  summary: { ...summary, updated_at: '' },
  failures: v.failures.rows,
  repeats: v.repeats.judge({ kind: 'all' }),
});

/** The outputs of a pass over the finished bundle, as the end of a run made them before the fold. */
const readBack = (dir: string) => {
  const v = visitors();
  return outputs(v, writeSummary(dir, 'run', undefined, [v.failures, v.repeats]));
};

/** A fold started on the bundle as it is, given the lines of `batches` as each is appended. */
const fold = (dir: string, batches: readonly (readonly Case[])[], groupId = 'g2') => {
  const v = visitors();
  const f = new LatestFold(dir, [v.tally, v.failures, v.repeats]);
  for (const batch of batches) f.visitLines(append(dir, batch, groupId));
  const facts = f.end();
  return facts && outputs(v, v.tally.summary('run', facts));
};

const cases = (prefix: string, n: number): Case[] =>
  Array.from({ length: n }, (_, i) => ({
    test: `${prefix}${i}`,
    outcome: (['passed', 'failed', 'error', 'passed', 'canceled'] as const)[i % 5] as Outcome,
    target: i % 3 === 0 ? 'other' : 'echo',
    sample: i % 2,
  }));

describe('LatestFold', () => {
  it('gives the visitors of a new bundle what a pass over it gives them', () => {
    const dir = newDir();
    const folded = fold(dir, [cases('a', 7), [], cases('b', 11)]);
    expect(folded).toBeDefined();
    expect(folded).toEqual(readBack(dir));
  });

  it('visits the rows the bundle held first, drift and lines that are not rows included', () => {
    const dir = newDir();
    append(dir, [...cases('a', 5), { test: 'a1', outcome: 'passed', target: 'echo', sample: 1, fingerprint: 'g' }]);
    appendFileSync(join(dir, 'index.jsonl'), 'not a row\n');
    append(dir, cases('c', 3));
    // A torn last line of a crash: cut before the run appends, so never counted.
    appendFileSync(join(dir, 'index.jsonl'), '{"schema":"proctor.case/1","key":"torn');
    const folded = fold(dir, [cases('b', 4), cases('d', 6)]);
    expect(folded?.summary).toMatchObject({ mixed: true, skipped_lines: 1 });
    expect(folded).toEqual(readBack(dir));
  });

  it('is inexact when a row supersedes one it visited: a rerun of a case the bundle held, or a key written twice', () => {
    const rerun = newDir();
    append(rerun, cases('a', 4));
    expect(fold(rerun, [cases('b', 2), [{ test: 'a1', outcome: 'passed', sample: 1 }]])).toBeUndefined();
    const twice = newDir();
    expect(fold(twice, [cases('a', 3), cases('a', 1)])).toBeUndefined();
  });

  it('is inexact when a visitor refuses a row the bundle held, rather than stopping the run before it starts', () => {
    const dir = newDir();
    append(dir, cases('a', 2));
    // A row an older version wrote: no identity, no usage.
    appendFileSync(join(dir, 'index.jsonl'), `${JSON.stringify({ key: 'legacy', outcome: 'failed' })}\n`);
    expect(fold(dir, [cases('b', 2)])).toBeUndefined();
  });

  it('leaves a visitor that reads the bundle itself to the pass at the end', () => {
    const dir = newDir();
    const f = new LatestFold(dir, [{ visit: () => {}, afterWriting: true }]);
    f.visitLines(append(dir, cases('a', 2)));
    expect(f.end()).toBeUndefined();
  });
});
