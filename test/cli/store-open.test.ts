import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { type TempProject, tempProject } from '../support/project.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');

const evalFile = `targets: [{ kind: echo }]
prompts: ["{{ w }}"]
tests:
  - { id: yes, vars: { w: apple }, assert: [{ type: equals, value: apple }] }
`;

let project: TempProject | undefined;
afterEach(() => project?.remove());

describe('a store that cannot be opened is bad input', () => {
  it('a SQLite path that cannot be created exits 2 at the url in proctor.toml, writing nothing', async () => {
    project = tempProject({
      'proctor.toml': '# the run index\n[store]\n  url = "sqlite:/proc/x/y.db"\n',
      'a.eval.yaml': evalFile,
    });
    // Node's recursive mkdir spins forever under /proc: the timeout turns a spin into a failed assertion.
    const run = await runCli(['eval', 'run'], { cwd: project.dir, timeoutMs: 20_000 });
    expect(run.signal).toBeNull();
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('proctor.toml:3:3: ');
    expect(run.stderr).toContain('/proc/x/y.db');
    expect(run.stderr).toMatch(/fix: .*\[store\] url/);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(project.exists('.proctor')).toBe(false);
  });

  it('an unreachable PostgreSQL store exits 2 with one line naming the url without its password', async () => {
    project = tempProject({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: proctor.toml's own ${ENV} reference, not JavaScript's
      'proctor.toml': '[store]\nurl = "postgres://proctor:${PGPASS}@127.0.0.1:1/nowhere"\n',
      'a.eval.yaml': evalFile,
    });
    const run = await runCli(['eval', 'run'], { cwd: project.dir, env: { PGPASS: 's3cret-pw' }, timeoutMs: 20_000 });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('proctor.toml:2:1: ');
    expect(run.stderr).toContain('postgres://proctor@127.0.0.1:1/nowhere');
    expect(run.stderr).not.toContain('s3cret-pw');
    expect(run.stderr).not.toContain('internal error');
    expect(run.stderr).not.toMatch(/^\s+at /m);
    // The problem on one line, the fix on the next.
    expect(run.stderr.trim().split('\n')).toHaveLength(2);
    expect(project.exists('.proctor')).toBe(false);
  });

  it('a runner kind that is not available is reported at its line before any store is opened', async () => {
    project = tempProject({
      'proctor.toml': '[runner]\nkind = "queue"\n[store]\nurl = "postgres://127.0.0.1:1/nowhere"\n',
      'a.eval.yaml': evalFile,
    });
    for (const args of [
      ['eval', 'run'],
      ['runs', 'list'],
    ]) {
      const run = await runCli(args, { cwd: project.dir, timeoutMs: 20_000 });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain('proctor.toml:2:1: runner kind "queue" is not available');
      expect(run.stderr).toContain('fix: ');
      expect(run.stderr).not.toContain('127.0.0.1:1');
    }
  });
});

describe.skipIf(!postgres || postgres.unavailable)(
  'a runner kind that is not available, with a PostgreSQL store',
  () => {
    let db: BackendStore | undefined;
    afterEach(async () => db?.remove());

    it('exits 2 without connecting to the store at all', async () => {
      db = await (postgres as NonNullable<typeof postgres>).create();
      // The backend created its tables: drop them, so any open by the CLI would show.
      const lobby = await pgClient(db.url);
      try {
        await lobby.query('drop table runs, instances, journal, results');
        project = tempProject({
          'proctor.toml': `[runner]\nkind = "queue"\n[store]\nurl = "${db.url}"\n`,
          'a.eval.yaml': evalFile,
        });
        const run = await runCli(['eval', 'run'], { cwd: project.dir, timeoutMs: 30_000 });
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain('runner kind "queue" is not available');
        const tables = await lobby.query("select count(*)::int as n from pg_tables where schemaname = 'public'");
        expect(tables.rows[0]).toEqual({ n: 0 });
      } finally {
        await lobby.end();
      }
    });
  },
);

const pgClient = async (url: string) => {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
};
