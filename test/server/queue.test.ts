import { describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { csrfOf, rawRequest, serveExplorer } from '../support/explorer.js';
import { redisProblem, withQueueFleet } from '../support/queue-fleet.js';
import { type StoreBackend, storeBackends } from '../support/store-backends.js';

const tests = Array.from({ length: 40 }, (_, i) => `  - { id: t${i} }`).join('\n');
const evalFile = `targets:\n  - { label: slow, kind: cli, command: "sleep 0.3; echo ok" }\nprompts: [go]\ntests:\n${tests}\n`;

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');
const unavailable = postgres?.unavailable ?? (await redisProblem());

describe.skipIf(unavailable !== undefined)(`proctor serve on the queue runner ${unavailable ?? ''}`, () => {
  it('starts an eval run on the fleet and cancels it there, through the configured runner as the CLI does', async () => {
    await withQueueFleet(postgres as StoreBackend, { files: { 'evals/slow.eval.yaml': evalFile } }, async (p) => {
      const served = await serveExplorer(p.dir);
      try {
        const headers = { 'content-type': 'application/json', 'x-proctor-csrf': await csrfOf(served.port) };
        const post = (path: string, body: unknown) =>
          rawRequest(served.port, path, { method: 'POST', headers, body: JSON.stringify(body) });
        const started = await post('/api/v1/runs', { evals: ['evals/slow.eval.yaml'] });
        expect(started.status, started.body).toBe(201);
        const { groupId } = JSON.parse(started.body) as { groupId: string };
        type Summary = { summary: { passed: number; queued: number; running: number; canceled: number } };
        const summary = async () =>
          (JSON.parse((await rawRequest(served.port, `/api/v1/runs/${groupId}`)).body) as Summary).summary;
        // Submitted detached to the fleet: its worker executes the cases.
        await eventually(async () => ((await summary()).passed > 0 ? true : undefined), 60_000);
        const canceled = await post(`/api/v1/runs/${groupId}/cancel`, {});
        // What the server said, should it fail (once seen: a 500 under the whole suite's load, not since).
        expect(canceled.status, `${canceled.body}\n${served.cli.stderr()}`).toBe(200);
        expect(JSON.parse(canceled.body).requested).toBeGreaterThan(0);
        const end = await eventually(async () => {
          const s = await summary();
          return s.queued + s.running === 0 ? s : undefined;
        }, 60_000);
        expect(end.canceled).toBeGreaterThan(0);
        expect(end.passed).toBeLessThan(40);
      } finally {
        await served.stop();
      }
    });
  }, 180_000);
});
