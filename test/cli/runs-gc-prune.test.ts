// `proctor runs gc --older-than`: the store stops growing without bound; finished runs keep their index row,
// their committed result and their bundle, and lose the per-step state only a resume of an unfinished run needs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { runCli } from '../support/cli.js';
import { onlyBundle, type TempProject, tempProject } from '../support/project.js';
import { runReaches } from '../support/run-records.js';
import { type RunnerHost, startRunnerHost } from '../support/runner-host-process.js';

// In a workspace: its cases journal the workspace they make and tear down (the rest their results record).
const evalText = `
workspace: { template: template }
targets: [{ kind: echo }]
prompts: ["{{ q }}"]
tests:
${['a', 'b', 'c'].map((q) => `  - { id: t-${q}, vars: { q: "${q}" }, assert: [{ type: contains, value: "${q}" }] }`).join('\n')}
`;

interface GcReport {
  pruned: { runs: number; journal_entries: number };
  store_bytes: { before: number; after: number };
}

describe('proctor runs gc --older-than', () => {
  let project: TempProject;
  let store: Store | undefined;
  let host: RunnerHost | undefined;
  const cli = (...args: string[]) => runCli(args, { cwd: project.dir });
  const dbFile = () => project.path('.proctor/proctor.db');

  beforeEach(() => {
    project = tempProject({ 'a.eval.yaml': evalText, 'template/a.txt': 'a\n' });
  });
  afterEach(async () => {
    await host?.kill();
    host = undefined;
    await store?.close();
    store = undefined;
    project.remove();
  });

  const counts = async (s: Store, groupId: string) => {
    const runs = await s.listRuns({ groupId });
    const instances = await Promise.all(runs.map((r) => s.getInstance(r.instanceId)));
    const journals = await Promise.all(runs.map((r) => s.readJournal(r.instanceId)));
    return {
      runs: runs.length,
      instances: instances.filter(Boolean).length,
      journalEntries: journals.reduce((n, j) => n + j.length, 0),
      results: (await s.readResults(groupId, 0, 100)).length,
    };
  };

  it('refuses a duration it cannot read, naming it and how to write one', async () => {
    const result = await cli('runs', 'gc', '--older-than', '3 weeks');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('3 weeks');
    expect(result.stderr).toMatch(/30d|12h|90m/);
  });

  it('prunes the instances and journals of runs finished before the cutoff, and keeps the rest', async () => {
    expect((await cli('eval', 'run', 'a.eval.yaml')).code).toBe(0);
    const bundle = onlyBundle(project);
    const groupId = bundle.split('/').at(-1) as string;
    const shownBefore = await cli('results', 'show', groupId);

    store = await openStore({ url: `sqlite:${dbFile()}` });
    const before = await counts(store, groupId);
    expect(before.runs).toBe(3);
    expect(before.instances).toBe(3);
    expect(before.journalEntries).toBeGreaterThan(0);
    // A run still going in the same store, owned by a live process: never pruned, whatever its age.
    host = await startRunnerHost({ store: dbFile(), runs: [{ runId: 'live', delayMs: 60_000 }] });
    const live = await runReaches(store, 'live', 'RUNNING');
    const liveJournal = await store.readJournal(live.instanceId);

    const fresh = await cli('runs', 'gc', '--older-than', '1h', '--json');
    expect(fresh.code).toBe(0);
    expect((JSON.parse(fresh.stdout) as GcReport).pruned).toEqual({ runs: 0, journal_entries: 0 });
    expect(await counts(store, groupId)).toEqual(before);

    const all = await cli('runs', 'gc', '--older-than', '0s', '--json');
    expect(all.code).toBe(0);
    const report = JSON.parse(all.stdout) as GcReport;
    expect(report.pruned).toEqual({ runs: 3, journal_entries: before.journalEntries });
    expect(report.store_bytes.after).toBeLessThanOrEqual(report.store_bytes.before);
    // The index rows and committed results stay: `runs list/show` and the bundle answer as before.
    expect(await counts(store, groupId)).toEqual({ ...before, instances: 0, journalEntries: 0 });
    expect(await store.getInstance(live.instanceId)).toBeDefined();
    expect(await store.readJournal(live.instanceId)).toEqual(liveJournal);
    const [run] = await store.listRuns({ groupId, limit: 1 });
    const show = await cli('runs', 'show', run?.runId as string);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('pruned by `proctor runs gc`');
    const shownAfter = await cli('results', 'show', groupId);
    expect(shownAfter.stdout).toBe(shownBefore.stdout);
    expect(shownAfter.code).toBe(0);

    const text = await cli('runs', 'gc', '--older-than', '0s');
    expect(text.stdout).toContain('pruned the step state of 0 finished run(s)');
  });
});
