import { cpSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import type { IndexRow } from '../../src/bundle/row.js';
import type { Summary } from '../../src/bundle/summary.js';
import type { Store, StoredResult } from '../../src/store/store.js';
import { bundleResultText } from '../support/bundle-result.js';
import { runCli, startCli, waitFor } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { fakeModelForFile } from '../support/fake-model-for-file.js';
import { onlyBundle, type TempProject, tempProject } from '../support/project.js';
import { type BackendStore, type StoreBackend, storeBackends } from '../support/store-backends.js';

const server = fakeModelForFile();

const cases = 40;

const project = (db: BackendStore): TempProject =>
  tempProject({
    'proctor.toml': `[store]\nurl = "${db.url}"\n`,
    'a.eval.yaml': `targets: [{ label: model, kind: openai, base_url: "${server.url}", model: m, api_key: k }]
prompts: ["{{ q }}"]
tests:
${Array.from({ length: cases }, (_, i) => `  - { id: t${i}, vars: { q: "case-${i}. [[latency:120]]" }, assert: [{ type: contains, value: echo }] }`).join('\n')}
`,
  });

const committed = async (store: Store, groupId: string): Promise<StoredResult[]> =>
  store.readResults(groupId, 0, 100_000);

const indexRows = (dir: string): IndexRow[] => (existsSync(join(dir, 'index.jsonl')) ? readIndex(dir).rows : []);

const summaryOf = (dir: string): Summary => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Summary;

/**
 * Starts `eval run` and kills it with SIGKILL once the store has committed results its bundle does not hold
 * yet: the state a follower that dies mid-run leaves. Returns the run (group) id and its bundle.
 */
const killFollowerMidRun = async (p: TempProject, store: Store): Promise<{ groupId: string; dir: string }> => {
  const cli = startCli(['eval', 'run', '--retries', '0', '-j', '4'], { cwd: p.dir, timeoutMs: 60_000 });
  await waitFor(() => /run (\S+): /.test(cli.stderr()));
  const groupId = (/run (\S+): /.exec(cli.stderr()) as RegExpExecArray)[1] as string;
  const dir = p.path(`.proctor/results/${groupId}`);
  await eventually(async () => {
    const n = (await committed(store, groupId)).length;
    return n >= 6 && n > indexRows(dir).length ? true : undefined;
  });
  cli.child.kill('SIGKILL');
  await cli.done;
  return { groupId, dir };
};

const runIds = (rows: readonly { run_id: string }[]): string[] => rows.map((r) => r.run_id).sort();

for (const backend of await storeBackends()) {
  describe.skipIf(backend.unavailable)(`a follower killed mid-run (${backend.name})`, () => {
    let db: BackendStore;
    let p: TempProject;
    beforeEach(async () => {
      db = await backend.create();
      p = project(db);
    });
    afterEach(async () => {
      p.remove();
      await db.remove();
    });

    it('results pull writes exactly the committed cases, once, and the same rows in a fresh checkout', async () => {
      const { groupId, dir } = await killFollowerMidRun(p, db.store);
      const stored = await committed(db.store, groupId);
      const before = indexRows(dir).length;
      expect(before).toBeLessThan(stored.length);

      const pulled = await runCli(['results', 'pull', groupId], { cwd: p.dir });
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(pulled.stderr).toContain(`${dir}: ${stored.length - before} row(s) written from the store`);
      const rows = indexRows(dir);
      expect(runIds(rows)).toEqual(runIds(stored.map((r) => r.row as unknown as IndexRow)));
      // Each row's result is the one the store committed, wherever the bundle keeps it.
      const files = new Map(stored.map((r) => [r.runId, r.files['result.json']]));
      for (const r of rows) expect(bundleResultText(dir, r), r.run_id).toBe(files.get(r.run_id));
      const passed = stored.filter((r) => r.row.outcome === 'passed').length;
      expect(summaryOf(dir).counts).toMatchObject({ total: stored.length, passed });

      // Pulled again: nothing is written twice.
      const again = await runCli(['results', 'pull', groupId], { cwd: p.dir });
      expect(again.stderr).toContain(`${dir}: 0 row(s) written from the store`);
      expect(indexRows(dir)).toHaveLength(stored.length);

      // Another checkout of the project (same store): the same rows, artifacts included.
      const fresh = tempProject();
      try {
        cpSync(p.path('a.eval.yaml'), fresh.path('a.eval.yaml'));
        cpSync(p.path('proctor.toml'), fresh.path('proctor.toml'));
        const there = await runCli(['results', 'pull', groupId, '-o', 'pulled'], { cwd: fresh.dir });
        expect(there.code, there.stderr).toBe(0);
        // The same rows and results; where a result sits in the pack may differ (the killed follower may have
        // packed results it wrote no row for).
        const pulledRows = indexRows(fresh.path('pulled'));
        const place = ({ result_at: _, ...row }: IndexRow) => row;
        expect(pulledRows.map(place)).toEqual(rows.map(place));
        for (const [i, r] of pulledRows.entries())
          expect(bundleResultText(fresh.path('pulled'), r)).toBe(bundleResultText(dir, rows[i] as IndexRow));
      } finally {
        fresh.remove();
      }
    });

    it('--resume writes the committed cases from the store and re-runs only the others', async () => {
      const { groupId, dir } = await killFollowerMidRun(p, db.store);
      const stored = await committed(db.store, groupId);
      const before = indexRows(dir).length;
      const resumed = await runCli(['eval', 'run', '--retries', '0', '--resume', groupId], { cwd: p.dir });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain(`${stored.length - before} committed result(s) written from the store`);
      expect(resumed.stderr).toContain(`Resume: running ${cases - stored.length} case(s)`);
      // A committed case was requested once, by the killed run; none of them again.
      for (const r of stored) {
        const id = (r.row as unknown as IndexRow).identity.test.slice(1);
        expect(server.countFor(`case-${id}.`), `case ${id}`).toBe(1);
      }
      const rows = indexRows(dir);
      expect(new Set(runIds(rows)).size).toBe(rows.length);
      expect(new Set(rows.map((r) => r.key)).size).toBe(cases);
      expect(rows).toHaveLength(cases);
      expect(summaryOf(dir).counts).toMatchObject({ total: cases, passed: cases });
    });
  });
}

describe('results pull', () => {
  let db: BackendStore;
  beforeEach(async () => {
    db = await ((await storeBackends())[0] as StoreBackend).create();
  });
  afterEach(async () => db.remove());

  it('refuses an unknown run with exit 2 and writes nothing', async () => {
    const p = project(db);
    try {
      const result = await runCli(['results', 'pull', 'no-such-run'], { cwd: p.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/no run "no-such-run" in the store[\s\S]*fix: .*runs list/);
      expect(p.exists('.proctor')).toBe(false);
    } finally {
      p.remove();
    }
  });

  it('--resume of a bundle whose follower died before its first row: the store fills it, nothing runs again', async () => {
    const p = tempProject({
      'a.eval.yaml': `targets: [{ kind: echo }]
prompts: ["{{ w }}"]
tests:
${['apple', 'pear', 'plum'].map((w) => `  - { id: ${w}, vars: { w: ${w} }, assert: [{ type: equals, value: ${w} }] }`).join('\n')}
`,
    });
    try {
      expect((await runCli(['eval', 'run', '-q'], { cwd: p.dir })).code).toBe(0);
      const dir = onlyBundle(p);
      const rows = readFileSync(join(dir, 'index.jsonl'), 'utf8');
      // What a follower killed before it wrote anything leaves: its group, and no row.
      for (const f of ['index.jsonl', 'summary.json', 'results.jsonl']) rmSync(join(dir, f), { force: true });
      const resumed = await runCli(['eval', 'run', '--resume', basename(dir)], { cwd: p.dir });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('3 committed result(s) written from the store');
      expect(resumed.stderr).toContain('Resume: running 0 case(s)');
      expect(readFileSync(join(dir, 'index.jsonl'), 'utf8')).toBe(rows);
      expect(summaryOf(dir).counts).toMatchObject({ total: 3, passed: 3 });
    } finally {
      p.remove();
    }
  });

  it('stores a result file over the cap cut at 8 MiB, and the row and the file say so', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const p = tempProject({
      'proctor.toml': `[store]\nurl = "${db.url}"\n`,
      'a.eval.yaml': `targets: [{ kind: echo }]
prompts: ["{{ w }}"]
tests:
  - { id: big, vars: { w: "${big}" }, assert: [{ type: equals, value: "${big}" }] }
`,
    });
    try {
      const run = await runCli(['eval', 'run', '-q', '-o', 'out'], { cwd: p.dir });
      expect(run.code, run.stderr).toBe(0);
      const [row] = indexRows(p.path('out'));
      expect(row?.truncated).toEqual(['result.json']);
      const file = p.path(`out/${row?.artifacts}/result.json`);
      expect(statSync(file).size).toBeLessThan(8 * 1024 * 1024 + 200);
      expect(readFileSync(file, 'utf8')).toMatch(/\n\[proctor: truncated: \d+ bytes, the first 8388608 kept\]\n$/);
      const [stored] = await committed(db.store, row?.group_id as string);
      expect(stored?.files['result.json']).toBe(readFileSync(file, 'utf8'));
      expect(summaryOf(p.path('out')).counts).toMatchObject({ total: 1, passed: 1 });
    } finally {
      p.remove();
    }
  });
});
