import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { tempProject } from '../support/project.js';
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
