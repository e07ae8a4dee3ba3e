// RepeatTally: a run's cases over their samples, judged by a pass rule; and what it keeps of a run's rows, counted
// in bytes of heap (not timed), since every case of a run passes through it.
import { describe, expect, it } from 'vitest';
import { RepeatTally } from '../../src/bundle/repeats.js';
import { type IndexRow, parseRow } from '../../src/bundle/row.js';
import type { Outcome } from '../../src/records.js';
import { gc, heapHeld } from '../support/heap.js';
import { aRow } from './fixture.js';

/** A row as a run's fold gives it: parsed from its line, so its strings are its own. */
const row = (test: string, target: string, sample: number, outcome: Outcome): IndexRow => {
  const written = aRow(`${test}-${target}-${sample}`, {
    identity: { eval: 'suite.eval.yaml', test, prompt: 'p1', target, sample },
    outcome,
  });
  return parseRow(JSON.stringify(written)) as IndexRow;
};

const tallyOf = (rows: readonly IndexRow[]): RepeatTally => {
  const tally = new RepeatTally();
  for (const r of rows) tally.visit(r);
  return tally;
};

describe('RepeatTally', () => {
  // t1 on echo: 2 of 3 samples pass, its sample 2 seen first; t2 on other: its one sample passes; t3 on echo fails.
  const rows = [
    row('t1', 'echo', 2, 'passed'),
    row('t2', 'other', 0, 'passed'),
    row('t1', 'echo', 0, 'failed'),
    row('t3', 'echo', 0, 'failed'),
    row('t1', 'echo', 1, 'passed'),
    row('t3', 'echo', 1, 'error'),
  ];

  it('counts each case once over its samples, by target in the order of their first case, and lists the flaky', () => {
    const verdict = tallyOf(rows).judge({ kind: 'all' });
    expect(verdict.total).toBe(3);
    expect(verdict.passed).toBe(1);
    expect(verdict.repeated).toBe(true);
    expect([...verdict.byTarget]).toEqual([
      ['echo', { passed: 0, total: 2 }],
      ['other', { passed: 1, total: 1 }],
    ]);
    // t3's samples agree (none passed): not flaky. t1 stands for itself by the sample of its first row.
    expect(verdict.flaky).toEqual([
      {
        identity: { eval: 'suite.eval.yaml', test: 't1', prompt: 'p1', target: 'echo', sample: 2 },
        samples: 3,
        passed: 2,
        pass: false,
        flaky: true,
      },
    ]);
  });

  it('judges by the rule: any sample, or a fraction of them', () => {
    const tally = tallyOf(rows);
    const any = tally.judge({ kind: 'any' });
    expect([any.passed, any.byTarget.get('echo')]).toEqual([2, { passed: 1, total: 2 }]);
    expect(any.flaky[0]?.pass).toBe(true);
    expect(tally.judge({ kind: 'fraction', at: 0.6 }).passed).toBe(2);
    expect(tally.judge({ kind: 'fraction', at: 0.7 }).passed).toBe(1);
  });

  it('calls a run of single samples unrepeated, and an empty one zero of zero', () => {
    const single = tallyOf([row('a', 'echo', 0, 'passed'), row('b', 'echo', 0, 'failed')]).judge({ kind: 'all' });
    expect([single.repeated, single.passed, single.total, single.flaky]).toEqual([false, 1, 2, []]);
    const none = new RepeatTally().judge({ kind: 'all' });
    expect([none.total, none.byTarget.size]).toEqual([0, 0]);
  });

  it('keeps none of the rows it is given', async () => {
    const given = Array.from({ length: 500 }, (_, i) => row(`t${i}`, 'echo', 0, 'passed'));
    const tally = tallyOf(given);
    const refs = given.flatMap((r) => [new WeakRef(r), new WeakRef(r.identity)]);
    given.length = 0;
    // A WeakRef holds its target until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
    expect(tally.judge({ kind: 'all' }).total).toBe(500);
  });

  // Measured (Node 20): ~180 B (a case's key and its numbers); ~205 B with an object per case and its identity.
  it('holds under 200 B per case', () => {
    const [small, large] = [2_000, 22_000].map((n) => {
      // The rows are made first: only what the tally keeps of them is counted.
      const given = Array.from({ length: n }, (_, i) => row(`t${i}`, i % 2 ? 'echo' : 'other', 0, 'passed'));
      return heapHeld(() => tallyOf(given));
    });
    expect(large?.held.judge({ kind: 'all' }).total).toBe(22_000);
    const perCase = ((large?.bytes ?? 0) - (small?.bytes ?? 0)) / 20_000;
    expect(perCase).toBeGreaterThan(0);
    expect(perCase).toBeLessThan(200);
  });
});
