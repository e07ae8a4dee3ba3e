import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEval } from '../../src/api/run-eval.js';
import { submitWindow } from '../../src/plan/case-requests.js';
import { loadProjectConfig } from '../../src/plan/config.js';
import type { EvalRunPlan } from '../../src/plan/eval-plan.js';
import { openStore } from '../../src/store/open.js';
import { eventually } from '../support/eventually.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { type TempProject, tempProject } from '../support/project.js';

const cases = 100_000;
const concurrency = 50;

let server: FakeModelServer;
let p: TempProject;

beforeAll(async () => {
  server = await startFakeModelServer({ recordPayloads: false });
  // Every reply hangs: the cases in flight stay in flight, and none finishes while the counts are read.
  const tests = Array.from({ length: cases }, (_, i) => JSON.stringify({ id: `t${i}`, vars: { n: i } }));
  p = tempProject({
    'suite.eval.yaml': `targets: [{ label: model, kind: openai, base_url: "${server.url}", model: m, api_key: k }]
prompts: ["case {{ n }} [[hang]]"]
tests: file://tests.jsonl
`,
    'tests.jsonl': `${tests.join('\n')}\n`,
  });
});
afterAll(async () => {
  await server.close();
  p.remove();
});

describe('runEval on a 100,000-case plan', () => {
  it('builds and submits only the window of requests ahead of what finished, not the plan', async () => {
    const config = loadProjectConfig(p.dir, {});
    const controller = new AbortController();
    let plan: EvalRunPlan | undefined;
    const run = runEval({
      config,
      cwd: p.dir,
      paths: [],
      flags: { maxConcurrency: concurrency, retries: 0 },
      env: {},
      signal: controller.signal,
      onStart: (started) => {
        plan = started;
      },
    });
    const store = await openStore(config.store);
    try {
      const running = async (): Promise<number> =>
        (await store.groupProgress((plan as EvalRunPlan).groupId))
          .filter((r) => r.status === 'RUNNING')
          .reduce((n, r) => n + r.count, 0);
      await eventually(async () => (plan && (await running()) === concurrency ? true : undefined), 60_000);
      // The dispatcher polls every 50 ms: by now it has topped the window up as far as it ever would.
      await new Promise((r) => setTimeout(r, 500));
      const requests = (plan as EvalRunPlan).requests;
      expect(requests.size).toBe(cases);
      expect(requests.taken).toBeGreaterThan(concurrency);
      expect(requests.taken).toBeLessThanOrEqual(submitWindow(concurrency));
      // Every request built was submitted, and none of the plan's others reached the store.
      expect(await store.countActive((plan as EvalRunPlan).groupId)).toBe(requests.taken);
    } finally {
      await store.close();
    }
    controller.abort();
    // Stopped, the run ends and reports the cases it started, none of the plan's others.
    const { summary } = await run;
    expect(summary?.counts.canceled).toBe(concurrency);
    expect((plan as EvalRunPlan).requests.taken).toBeLessThanOrEqual(submitWindow(concurrency));
  });
});
