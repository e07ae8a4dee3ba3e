// A 429 on a worker shows in the submitter's progress line, as it does for the local runner: the workers publish
// their paused targets to Redis and the follower reads them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { redisProblem, withQueueFleet } from '../support/queue-fleet.js';
import { type StoreBackend, storeBackends } from '../support/store-backends.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');
const unavailable = postgres?.unavailable ?? (await redisProblem());

describe.skipIf(unavailable !== undefined)(`rate limits on the queue runner ${unavailable ?? ''}`, () => {
  let server: FakeModelServer;
  beforeAll(async () => {
    server = await startFakeModelServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("the follower's progress line (eval run, runs follow) says which target a worker holds back after a 429, until when", async () => {
    // The pause is shown while it lasts, on a plain line every 2 s: 8 s gives a loaded machine several chances.
    const files = {
      'rl.eval.yaml': `
targets: [{ label: busyapi, kind: openai, base_url: "${server.url}", model: q1, api_key: k }]
prompts: ["wait [[status:429 retry-after:8 times:1]]"]
evaluate_options: { retries: 0 }
`,
    };
    await withQueueFleet(postgres as StoreBackend, { files }, async (p) => {
      const run = await runCli(['eval', 'run', 'rl.eval.yaml'], { cwd: p.dir, timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/⏸ rate-limited by busyapi, resuming in \d/);
      expect(server.requests.filter((r) => r.body.model === 'q1').map((r) => r.status)).toEqual([429, 200]);
      // `runs follow` of a detached run shows it too.
      p.write('rl.eval.yaml', p.read('rl.eval.yaml').replace('wait [[', 'again [['));
      const detached = await runCli(['eval', 'run', 'rl.eval.yaml', '--detach'], { cwd: p.dir });
      expect(detached.code, detached.stderr).toBe(0);
      const followed = await runCli(['runs', 'follow', detached.stdout.trim()], { cwd: p.dir, timeoutMs: 60_000 });
      expect(followed.code, followed.stderr).toBe(0);
      expect(followed.stderr).toMatch(/⏸ rate-limited by busyapi, resuming in \d/);
    });
  }, 90_000);
});
