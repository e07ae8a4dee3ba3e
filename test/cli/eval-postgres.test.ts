import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import {
  type FakeModelServer,
  type FakeModelServerOptions,
  startFakeModelServer,
} from '../support/fake-model-server.js';
import { type TempProject, tempProject } from '../support/project.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');

describe.skipIf(!postgres || postgres.unavailable)('eval run with a PostgreSQL store', () => {
  let db: BackendStore | undefined;
  afterEach(async () => db?.remove());

  it('records every run in PostgreSQL and follows it there, with the same bundle as SQLite', async () => {
    db = await (postgres as NonNullable<typeof postgres>).create();
    const p = tempProject({
      'proctor.toml': `[store]\nurl = "${db.url}"\n`,
      'a.eval.yaml': `targets: [{ kind: echo }]
prompts: ["{{ w }}"]
tests:
  - { id: yes, vars: { w: apple }, assert: [{ type: equals, value: apple }] }
  - { id: no, vars: { w: pear }, assert: [{ type: equals, value: plum }] }
`,
    });
    const run = await runCli(['eval', 'run', '-o', 'out'], { cwd: p.dir });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/echo\s+2\s+1\s+1\s+0/);
    expect(p.exists('.proctor/proctor.db')).toBe(false);
    const runs = JSON.parse((await runCli(['runs', 'list', '--json'], { cwd: p.dir })).stdout) as {
      status: string;
      outcome: string;
    }[];
    expect(runs.map((r) => `${r.status}:${r.outcome}`).sort()).toEqual(['COMPLETED:failed', 'COMPLETED:passed']);
  });

  /**
   * A case per prompt of `words` (each passing when the reply holds its first word) against a fake model on a fresh
   * database; `admin` is the test's own connection to it.
   */
  const withModelCases = async (
    words: string[],
    options: FakeModelServerOptions,
    body: (project: TempProject, model: FakeModelServer, admin: pg.Client) => Promise<void>,
  ): Promise<void> => {
    db = await (postgres as NonNullable<typeof postgres>).create();
    const model = await startFakeModelServer(options);
    const { default: postgresClient } = await import('pg');
    const admin = new postgresClient.Client({ connectionString: db.url });
    await admin.connect();
    try {
      const tests = words.map(
        (w, i) => `  - { id: t${i}, vars: { w: "${w}" }, assert: [{ type: contains, value: ${w.split(' ')[0]} }] }`,
      );
      const p = tempProject({
        'proctor.toml': `[store]\nurl = "${db.url}"\n`,
        'a.eval.yaml': `targets: [{ kind: openai, base_url: "${model.url}", model: m, api_key: sk-test }]
prompts: ["{{ w }}"]
tests:
${tests.join('\n')}
`,
      });
      await body(p, model, admin);
    } finally {
      await admin.end();
      await model.close();
    }
  };

  it("gives a case's slot to the next one while its commit waits, and reports neither before it is committed", () =>
    withModelCases(['apple', 'pear'], { latencyMs: 20 }, async (p, model, admin) => {
      // The schema exists once the store has been opened; then results are locked against every write.
      expect((await runCli(['runs', 'list'], { cwd: p.dir })).code).toBe(0);
      await admin.query('begin');
      await admin.query('lock table results in exclusive mode');
      const cli = startCli(['eval', 'run', '-q', '-j', '1', '-o', 'out'], { cwd: p.dir, timeoutMs: 60_000 });
      // The first case's commit waits on the lock; the second case calls the model meanwhile, one at a time.
      await eventually(async () => (model.requests.length === 2 ? true : undefined));
      expect(model.peakInFlight).toBe(1);
      const committed = await admin.query('select count(*)::int as n from results');
      expect(committed.rows[0].n).toBe(0);
      expect(p.exists('out/index.jsonl') ? p.read('out/index.jsonl') : '').toBe('');
      await admin.query('commit');
      const run = await cli.done;
      expect(run.code, run.stderr).toBe(0);
      expect(p.read('out/index.jsonl').trim().split('\n')).toHaveLength(2);
    }));

  it('stops a case whose claim is refused (ended by another process before it started): its call, no result', () =>
    withModelCases(['apple [[gate]]', 'pear [[hang]]', 'plum'], {}, async (p, model, admin) => {
      const cli = startCli(['eval', 'run', '-q', '-j', '1', '-o', 'out'], { cwd: p.dir, timeoutMs: 30_000 });
      await eventually(async () => (model.requests.length === 1 ? true : undefined));
      // The second case waits for the slot, its run submitted while the first calls the model (not always before
      // that call goes out); another process ends its run meanwhile. The first run's claim commits while its call
      // waits (not always before the call goes out): until then it is QUEUED too, and the one a query would end.
      await eventually(async () => {
        const counts = await admin.query(
          `select count(*) filter (where status = 'RUNNING')::int as running,
                  count(*) filter (where status = 'QUEUED')::int as queued
           from runs`,
        );
        return counts.rows[0].running === 1 && counts.rows[0].queued > 0 ? true : undefined;
      });
      const ended = await admin.query(
        `update runs set status = 'CANCELED', outcome = 'canceled', finished_at = $1
         where run_id = (select run_id from runs where status = 'QUEUED' order by run_id limit 1)`,
        [Date.now()],
      );
      expect(ended.rowCount).toBe(1);
      model.openGate();
      // Its task may have started alongside its claim, calling a model that never answers: the refusal aborts that
      // call, or the third case would wait for the slot until the command is killed.
      const run = await cli.done;
      expect(run.signal, run.stderr).toBeNull();
      expect(run.code, run.stderr).toBe(0);
      expect(model.countFor('plum')).toBe(1);
      const results = await admin.query('select count(*)::int as n from results');
      expect(results.rows[0].n).toBe(2);
      const statuses = await admin.query('select status from runs order by status');
      expect(statuses.rows.map((r: { status: string }) => r.status)).toEqual(['CANCELED', 'COMPLETED', 'COMPLETED']);
    }));

  it('survives the server dropping every connection mid-run: no crash, a whole bundle, no run left unfinished', async () => {
    db = await (postgres as NonNullable<typeof postgres>).create();
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      const p = tempProject({
        'proctor.toml': `[store]\nurl = "${db.url}"\n`,
        'a.eval.yaml': `targets: [{ kind: echo, delay_ms: 100 }]
prompts: ["{{ w }}"]
tests:
  - { id: yes, vars: { w: apple }, assert: [{ type: equals, value: apple }] }
`,
      });
      const cases = 60;
      const cli = startCli(['eval', 'run', '-q', '-j', '4', '--repeat', String(cases), '-o', 'out'], {
        cwd: p.dir,
        timeoutMs: 90_000,
      });
      const count = async (where: string): Promise<number> =>
        (await admin.query(`select count(*)::int as n from runs where ${where}`)).rows[0].n as number;
      // Twice, so both idle pooled connections and ones in the middle of a write are cut.
      for (const finished of [4, 24]) {
        await eventually(async () => ((await count(`status = 'COMPLETED'`)) >= finished ? true : undefined));
        const killed = await admin.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
        );
        expect(killed.rowCount).toBeGreaterThan(0);
      }
      const run = await cli.done;
      expect(run.signal, run.stderr).toBeNull();
      expect(run.stderr).not.toMatch(/internal error|Unhandled|^\s+at /m);
      // The statements the server cut were retried on new connections: no case paid for it.
      expect(run.code, run.stderr).toBe(0);
      const summary = JSON.parse(p.read('out/summary.json')) as { counts: { total: number; passed: number } };
      expect(summary.counts).toMatchObject({ total: cases, passed: cases });
      const rows = p
        .read('out/index.jsonl')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { key: string });
      expect(new Set(rows.map((r) => r.key)).size).toBe(cases);
      expect(await count(`status in ('QUEUED', 'RUNNING')`)).toBe(0);
      expect(await count('true')).toBe(cases);
    } finally {
      await admin.end();
    }
  });

  it('ends cleanly when the store is gone for good: a clean error, exit 1, the finished cases kept', async () => {
    db = await (postgres as NonNullable<typeof postgres>).create();
    const direct = new URL(db.url);
    const proxy = await startTcpProxy(direct.hostname, Number(direct.port || 5432));
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      const p = tempProject({
        'proctor.toml': `[store]\nurl = "${viaProxy}"\n`,
        'a.eval.yaml': `targets: [{ kind: echo, delay_ms: 100 }]
prompts: ["{{ w }}"]
tests:
  - { id: yes, vars: { w: apple }, assert: [{ type: equals, value: apple }] }
`,
      });
      const cli = startCli(['eval', 'run', '-q', '-j', '4', '--repeat', '60', '-o', 'out'], {
        cwd: p.dir,
        timeoutMs: 90_000,
      });
      const count = async (where: string): Promise<number> =>
        (await admin.query(`select count(*)::int as n from runs where ${where}`)).rows[0].n as number;
      await eventually(async () => ((await count(`status = 'COMPLETED'`)) >= 4 ? true : undefined));
      await proxy.cut();
      const run = await cli.done;
      expect(run.signal, run.stderr).toBeNull();
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain('error: lost the connection to the store');
      expect(run.stderr).toContain('proctor runs gc');
      expect(run.stderr).not.toMatch(/internal error|Unhandled|^\s+at /m);
      // The store is the record: every case it committed before the cut reaches the bundle once it answers
      // again (the follower wrote what it had read; `results pull` writes the rest). The others never
      // committed: `--resume` runs them again.
      p.write('proctor.toml', `[store]\nurl = "${db.url}"\n`);
      const groupId = p.read('out/.groups').trim();
      const pulled = await runCli(['results', 'pull', groupId, '-o', 'out'], { cwd: p.dir });
      expect(pulled.code, pulled.stderr).toBe(0);
      const rows = p
        .read('out/index.jsonl')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { outcome: string; run_id: string });
      expect(rows.filter((r) => r.outcome === 'passed').length).toBeGreaterThanOrEqual(4);
      expect(rows.length).toBe(await count(`run_id in (select run_id from results)`));
      expect(new Set(rows.map((r) => r.run_id)).size).toBe(rows.length);
      // …and the summary counts them.
      const summary = JSON.parse(p.read('out/summary.json')) as { counts: { total: number; passed: number } };
      expect(summary.counts.total).toBe(rows.length);
      expect(summary.counts.passed).toBe(rows.filter((r) => r.outcome === 'passed').length);
      // What the command could not finish, `runs gc` fails once the store answers again.
      const gc = await runCli(['runs', 'gc', '--json'], { cwd: p.dir });
      expect(gc.code, gc.stderr).toBe(0);
      expect(await count(`status in ('QUEUED', 'RUNNING')`)).toBe(0);
    } finally {
      await admin.end();
      await proxy.cut();
    }
  });
});
