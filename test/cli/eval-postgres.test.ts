import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

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
});
