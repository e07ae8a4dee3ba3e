import { afterAll, describe, expect, it } from 'vitest';
import { compareRows } from '../../src/bundle/compare.js';
import { latestRows } from '../../src/bundle/latest-rows.js';
import { type FixtureCase, removeBundles, writeBundle } from './fixture.js';

const compare = (base: FixtureCase[], head: FixtureCase[]) =>
  compareRows({ base: 'b', head: 'h' }, latestRows(writeBundle(base)).rows, latestRows(writeBundle(head)).rows);

const tests = (changes: { identity: { test: string } }[]) => changes.map((c) => c.identity.test).sort();

afterAll(removeBundles);

describe('compareRows', () => {
  it('sorts every case into regressed, fixed, score changed, outcome changed and one-sided', () => {
    const c = compare(
      [
        { test: 'stays', outcome: 'passed' },
        { test: 'breaks', outcome: 'passed' },
        { test: 'errs', outcome: 'passed' },
        { test: 'heals', outcome: 'error' },
        { test: 'drifts', outcome: 'failed', score: 0.25 },
        { test: 'worsens', outcome: 'failed' },
        { test: 'gone', outcome: 'passed' },
      ],
      [
        { test: 'stays', outcome: 'passed' },
        { test: 'breaks', outcome: 'failed' },
        { test: 'errs', outcome: 'error' },
        { test: 'heals', outcome: 'passed' },
        { test: 'drifts', outcome: 'failed', score: 0.5 },
        { test: 'worsens', outcome: 'error' },
        { test: 'new', outcome: 'failed' },
      ],
    );
    expect(tests(c.regressed)).toEqual(['breaks', 'errs']);
    expect(tests(c.fixed)).toEqual(['heals']);
    expect(tests(c.score_changed)).toEqual(['drifts']);
    expect(c.score_changed[0]).toMatchObject({ base: { score: 0.25 }, head: { score: 0.5 } });
    expect(tests(c.outcome_changed)).toEqual(['worsens']);
    expect(tests(c.only_in_base)).toEqual(['gone']);
    expect(tests(c.only_in_head)).toEqual(['new']);
    expect(c.counts).toMatchObject({ common: 6, unchanged: 1, regressed: 2, fixed: 1 });
    expect(c.verdict).toMatch(/^REGRESSED: 2 case\(s\)/);
  });

  it('uses the latest row per key and reports pass rates per target with the delta', () => {
    const c = compare(
      [
        { test: 'a', outcome: 'failed' },
        { test: 'a', outcome: 'passed' }, // a rerun: the latest row wins
        { test: 'a', outcome: 'failed', target: 'other' },
      ],
      [
        { test: 'a', outcome: 'passed' },
        { test: 'a', outcome: 'passed', target: 'other' },
      ],
    );
    expect(c.regressed).toEqual([]);
    expect(c.targets).toEqual([
      {
        target: 'echo',
        base: { total: 1, passed: 1, pass_rate: 1 },
        head: { total: 1, passed: 1, pass_rate: 1 },
        delta: 0,
      },
      {
        target: 'other',
        base: { total: 1, passed: 0, pass_rate: 0 },
        head: { total: 1, passed: 1, pass_rate: 1 },
        delta: 1,
      },
    ]);
    expect(c.overall).toMatchObject({ base: { pass_rate: 0.5 }, head: { pass_rate: 1 }, delta: 0.5 });
    expect(c.verdict).toMatch(/^IMPROVED: 1 case\(s\) fixed/);
  });

  it('says so when the bundles share nothing, and when nothing changed', () => {
    expect(compare([{ test: 'a', outcome: 'passed' }], [{ test: 'b', outcome: 'passed' }]).verdict).toMatch(
      /^NOTHING IN COMMON/,
    );
    const same = compare([{ test: 'a', outcome: 'passed' }], [{ test: 'a', outcome: 'passed' }]);
    expect(same.verdict).toMatch(/^NO REGRESSIONS: 1 common case/);
    expect(same.targets[0]?.base).not.toBeNull();
  });
});
