// The first cases of an eval run start after a transaction of as many as may run at once, not of half a submit
// window (100 at least): on a queue fleet the first dispatch waited for the store to take 100 runs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runEval } from '../../src/api/run-eval.js';
import { loadProjectConfig } from '../../src/plan/config.js';
import { type TempProject, tempProject } from '../support/project.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');

describe.skipIf(postgres?.unavailable !== undefined)('runEval submitting (postgres)', () => {
  let db: BackendStore;
  let project: TempProject;
  beforeEach(async () => {
    db = await (postgres as NonNullable<typeof postgres>).create();
  });
  afterEach(async () => {
    project?.remove();
    await db.remove();
  });

  it('submits first only what may start at once, then the rest of the window', async () => {
    const tests = Array.from({ length: 30 }, (_, i) => `{ vars: { q: q${i} } }`).join(', ');
    project = tempProject({
      'proctor.toml': `[store]\nurl = "${db.url}"\n`,
      'a.eval.yaml': `targets: [{ kind: echo }]\nprompts: ["{{ q }}"]\ntests: [${tests}]\n`,
    });
    const { summary } = await runEval({
      config: loadProjectConfig(project.dir, {}),
      cwd: project.dir,
      paths: [],
      flags: { maxConcurrency: 4, retries: 0 },
      env: {},
    });
    expect(summary?.counts.passed).toBe(30);
    // Each submit is one transaction: the instances it inserted (never updated after) share their xmin.
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const batches = await client.query<{ n: string }>(
        'select count(*) as n from instances group by xmin::text order by min(created_at)',
      );
      expect(batches.rows.map((r) => Number(r.n))).toEqual([4, 26]);
    } finally {
      await client.end();
    }
  });
});
