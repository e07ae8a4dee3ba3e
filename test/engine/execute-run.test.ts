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

/** An eval of `n` distinct tests against the echo target, answering after `delayMs`. */
const suite = (n: number, delayMs: number): string => {
  const tests = Array.from(
    { length: n },
    (_, i) => `  - { id: t${i}, vars: { w: w${i} }, assert: [{ type: equals, value: w${i} }] }`,
  );
  return `targets: [{ kind: echo, delay_ms: ${delayMs} }]\nprompts: ["{{ w }}"]\ntests:\n${tests.join('\n')}\n`;
};

/** Runs the project's eval at `-j 1`, in this process (so its commits can be counted); every case passes. */
const evalAtOne = async (dir: string, n = cases): Promise<void> => {
  const result = await runEval({
    config: loadProjectConfig(dir, {}),
    cwd: dir,
    paths: [],
    flags: { maxConcurrency: 1, retries: 0 },
    env: {},
  });
  expect(result.summary?.counts.passed).toBe(n);
};

beforeAll(() => {
  p = tempProject({ 'a.eval.yaml': suite(cases, 20) });
});
afterAll(() => p.remove());

describe('an eval case on the local runner', () => {
  it("costs the store at most 1 commit a case at -j 1: its finish, with its result, joins the next case's claim", async () => {
    const counter = countCommits();
    try {
      await evalAtOne(p.dir);
    } finally {
      counter.restore();
    }
    // A case's finish frees its slot as it is written, so the next case's claim joins it (the first claim is
    // alone); a few more for submitting the runs and the heartbeat.
    expect(counter.counts.commits).toBeLessThanOrEqual(cases + 5);
    // Its result records its steps: an eval case that makes no resource journals nothing.
    const store = await openStore(loadProjectConfig(p.dir, {}).store);
    try {
      expect(await journalSteps(store)).toEqual(Array(cases).fill([]));
    } finally {
      await store.close();
    }
  });

  it('shares a commit with the cases that finish within a few ms of it: a 2 ms target, 1 case at a time', async () => {
    const quick = tempProject({ 'a.eval.yaml': suite(40, 2) });
    try {
      const counter = countCommits();
      try {
        await evalAtOne(quick.dir, 40);
      } finally {
        counter.restore();
      }
      // Each case ends on a turn of its own. Committed on the next turn, each would cost one; grouped, 40 cases take a few;
      // half as many leaves a machine under load ample room.
      expect(counter.counts.commits).toBeLessThanOrEqual(20);
    } finally {
      quick.remove();
    }
  });

  it('journals nothing its result records, and `runs show` shows its steps as the result records them', async () => {
    const store = await openStore(loadProjectConfig(p.dir, {}).store);
    let runId = '';
    try {
      const [run] = await store.listRuns({ limit: 1 });
      runId = run?.runId ?? '';
      expect(await store.readJournal(run?.instanceId ?? '')).toEqual([]);
    } finally {
      await store.close();
    }
    const shown = await runCli(['runs', 'show', runId], { cwd: p.dir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^ {2}prompt +prompt +completed +1 +- *$/m);
    expect(shown.stdout).toMatch(/^ {2}verify +verify +completed +1 +- *$/m);
    expect(shown.stdout).toMatch(/^journal: {2}none \(an eval case records its steps with its result\)$/m);
    const json = await runCli(['runs', 'show', runId, '--json'], { cwd: p.dir });
    expect(JSON.parse(json.stdout)).toMatchObject({
      journal: [],
      recorded: [
        { stepId: 'prompt', status: 'completed', attempts: 1 },
        { stepId: 'verify', status: 'completed', attempts: 1 },
      ],
    });
  });
});
