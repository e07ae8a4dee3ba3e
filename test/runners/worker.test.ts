// What an eval case costs a queue worker in PostgreSQL statements, counted on the wire (not timed): the worker
// runs in this process on a store reached through a counting relay; the follower is `eval run`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProjectConfig } from '../../src/plan/config.js';
import type { QueueConfig } from '../../src/runners/queue.js';
import { QueueWorker } from '../../src/runners/worker.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/store.js';
import { runCli } from '../support/cli.js';
import { type PgWireCounter, startPgWireCounter } from '../support/pg-wire-counter.js';
import { queueProject, redisProblem } from '../support/queue-fleet.js';
import { journalSteps } from '../support/run-records.js';
import { type BackendStore, storeBackends } from '../support/store-backends.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');
const unavailable = postgres?.unavailable ?? (await redisProblem());
const cases = 60;

describe.skipIf(unavailable !== undefined)(`an eval case on a queue worker ${unavailable ?? ''}`, () => {
  let db: BackendStore;
  let counter: PgWireCounter;
  let store: Store;
  beforeAll(async () => {
    db = await (postgres as NonNullable<typeof postgres>).create();
    const url = new URL(db.url);
    counter = await startPgWireCounter(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${counter.port}`;
    store = await openPostgresStore(url.toString());
  });
  afterAll(async () => {
    await store.close();
    await counter.close();
    await db.remove();
  });

  it('costs its worker 1 statement when chained: its commit, with its result', async () => {
    const tests = Array.from(
      { length: cases },
      (_, i) => `  - { id: t${i}, vars: { w: w${i} }, assert: [{ type: equals, value: w${i} }] }`,
    );
    const project = queueProject({
      storeUrl: db.url,
      // The reconciler's look for lost jobs once, at the start: this test counts a case's statements.
      stalledIntervalMs: 600_000,
      files: { 'a.eval.yaml': `targets: [{ kind: echo }]\nprompts: ["{{ w }}"]\ntests:\n${tests.join('\n')}\n` },
    });
    const config = loadProjectConfig(project.dir, {});
    const worker = new QueueWorker(
      store,
      { ...(config.runner.config as QueueConfig), concurrency: 1 },
      {},
      config.root,
    );
    let ready: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      ready = resolve;
    });
    void worker.run({ ready });
    try {
      await started;
      counter.reset();
      // One case at a time: each commit hands its freed slot to the next case, on this worker.
      const run = await runCli(['eval', 'run', '-j', '1'], { cwd: project.dir, timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(0);
      // The first case's claim, and a probe for waiting runs each second while the follower starts (2 a case
      // before the prompt entry went with the commit, 3 before the verify entry did).
      expect(counter.statements).toBeGreaterThanOrEqual(cases);
      expect(counter.statements).toBeLessThanOrEqual(cases + 30);
      // Its result records its steps: an eval case that makes no resource journals nothing.
      expect(await journalSteps(store)).toEqual(Array(cases).fill([]));
    } finally {
      await worker.close();
      project.remove();
    }
  });
});
