// What an eval case costs the store on the local runner, counted in SQLite commits (not timed): every commit
// writes its pages to the WAL, and a case's writes are most of a run's store time.
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEval } from '../../src/api/run-eval.js';
import { loadProjectConfig } from '../../src/plan/config.js';
import { openStore } from '../../src/store/open.js';
import { runCli } from '../support/cli.js';
import { type TempProject, tempProject } from '../support/project.js';
import { journalSteps } from '../support/run-records.js';

type Method = (...args: unknown[]) => unknown;

/**
 * Counts the commits of every SQLite connection of this process: COMMITs, and row writes outside a transaction
 * (the schema's statements on open are not a run's).
 */
const countCommits = () => {
  const probe = new BetterSqlite3(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<'run', Method>;
  probe.close();
  const original = proto.run;
  const counts = { commits: 0, inTransaction: false };
  proto.run = function (this: { source: string }, ...args: unknown[]) {
    const word = this.source.trim().split(/\s/)[0]?.toLowerCase() ?? '';
    if (word === 'begin') counts.inTransaction = true;
    else if (word === 'commit' || word === 'rollback') {
      counts.inTransaction = false;
      if (word === 'commit') counts.commits++;
    } else if (['insert', 'update', 'delete'].includes(word) && !counts.inTransaction) counts.commits++;
    return original.apply(this, args);
  };
  return { counts, restore: () => (proto.run = original) };
};

const cases = 20;
let p: TempProject;

beforeAll(() => {
  const tests = Array.from(
    { length: cases },
    (_, i) => `  - { id: t${i}, vars: { w: w${i} }, assert: [{ type: equals, value: w${i} }] }`,
  );
  p = tempProject({
    'a.eval.yaml': `targets: [{ kind: echo, delay_ms: 20 }]\nprompts: ["{{ w }}"]\ntests:\n${tests.join('\n')}\n`,
  });
});
afterAll(() => p.remove());

describe('an eval case on the local runner', () => {
  it("costs the store 1 commit at -j 1: its finish, with its journal entries and result, and the next case's claim", async () => {
    const config = loadProjectConfig(p.dir, {});
    const counter = countCommits();
    try {
      const result = await runEval({
        config,
        cwd: p.dir,
        paths: [],
        flags: { maxConcurrency: 1, retries: 0 },
        env: {},
      });
      expect(result.summary?.counts.passed).toBe(cases);
    } finally {
      counter.restore();
    }
    // A case's finish frees its slot as it is written, so the next case's claim joins it (the first claim is
    // alone); a few more for submitting the runs and the heartbeat.
    expect(counter.counts.commits).toBeGreaterThanOrEqual(cases);
    expect(counter.counts.commits).toBeLessThanOrEqual(cases + 5);
    // The journal still holds both steps of every case, in order.
    const store = await openStore(config.store);
    try {
      expect(await journalSteps(store)).toEqual(Array(cases).fill(['prompt', 'verify']));
    } finally {
      await store.close();
    }
  });

  it("journals its steps' context changes without the outputs its result holds, and `runs show` shows them", async () => {
    const store = await openStore(loadProjectConfig(p.dir, {}).store);
    let runId = '';
    try {
      const [run] = await store.listRuns({ limit: 1 });
      runId = run?.runId ?? '';
      const [prompt, verify] = await store.readJournal(run?.instanceId ?? '');
      // The change each step made, so the journal replays to the context; not the output result.json holds.
      expect(prompt?.ops).toMatchObject([{ op: 'set', path: 'outputs.prompt', value: { text: expect.any(String) } }]);
      expect(verify?.ops).toMatchObject([{ op: 'set', path: 'verifications.main', value: { pass: true } }]);
      expect([prompt?.output, verify?.output]).toEqual([null, null]);
    } finally {
      await store.close();
    }
    const shown = await runCli(['runs', 'show', runId], { cwd: p.dir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^ {2}prompt +prompt +completed +1 /m);
    expect(shown.stdout).toMatch(/^ {2}verify +verify +completed +1 /m);
    expect(shown.stdout).toContain(
      '1. prompt (attempt 1) set outputs.prompt\n  2. verify (attempt 1) set verifications.main',
    );
  });
});
