// `--budget-usd` end to end: the built CLI against fake OpenAI-compatible target and judge servers whose every
// reply reports fixed usage, priced by [pricing], so each case costs exactly the same known amount.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexRow } from '../../src/bundle/row.js';
import type { Summary } from '../../src/bundle/summary.js';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { indexRows, onlyBundle, type TempProject, tempProject } from '../support/project.js';
import { redisProblem, withQueueFleet } from '../support/queue-fleet.js';
import { type StoreBackend, storeBackends } from '../support/store-backends.js';

let target: FakeModelServer;
let judge: FakeModelServer;
beforeAll(async () => {
  target = await startFakeModelServer({ usage: { prompt_tokens: 100, completion_tokens: 50 } });
  judge = await startFakeModelServer({
    usage: { prompt_tokens: 200, completion_tokens: 40 },
    respond: () => ({ toolInput: { reason: 'fine', pass: true, score: 1 } }),
  });
});
afterAll(async () => {
  await target.close();
  await judge.close();
});

// Target: 100 input at $2/M + 50 output at $10/M; judge: 200 at $1/M + 40 at $4/M.
const targetCost = (100 * 2 + 50 * 10) / 1e6;
const caseCost = targetCost + (200 * 1 + 40 * 4) / 1e6;
const cases = 20;
const concurrency = 4;

const pricing = `
[pricing."openai:target-model"]
input = 2.0
output = 10.0
`;
const judgePricing = `
[pricing."judge-model"]
input = 1.0
output = 4.0
`;
const judgeTarget = () => `
[targets.grader]
kind = "openai"
base_url = "${judge.url}"
model = "judge-model"
api_key = "sk-judge"

[defaults]
judge = "grader"
`;
const evalFile = () => `
targets:
  - { label: model, kind: openai, base_url: "${target.url}", model: target-model, api_key: sk-target }
prompts: ["{{ q }}"]
default_test:
  assert: [{ type: llm-rubric, value: answers the question }]
tests:
${Array.from({ length: cases }, (_, i) => `  - { id: t${i}, vars: { q: "question ${i}" } }`).join('\n')}
`;

const spend = (row: IndexRow): number => (row.usage.cost_usd ?? 0) + (row.usage.judge?.cost_usd ?? 0);
const notStarted = (row: IndexRow): boolean => row.error?.kind === 'budget_exceeded';
const summaryOf = (bundle: string): Summary => JSON.parse(readFileSync(join(bundle, 'summary.json'), 'utf8'));

/** Runs at 40 % of the suite's full cost and checks that dispatch stopped within it; returns the bundle. */
const runAtFortyPercent = async (p: TempProject, extraArgs: string[] = []): Promise<string> => {
  const budget = 0.4 * cases * caseCost;
  const before = target.requests.length;
  const run = await runCli(
    ['eval', 'run', 'budget.eval.yaml', '-j', String(concurrency), '--budget-usd', String(budget), ...extraArgs],
    { cwd: p.dir, timeoutMs: 90_000 },
  );
  expect(run.code, run.stderr).toBe(1);
  const bundle = onlyBundle(p);
  const rows = indexRows<IndexRow>(bundle);
  expect(rows).toHaveLength(cases);
  const started = rows.filter((r) => !notStarted(r));
  const spent = started.reduce((sum, r) => sum + spend(r), 0);
  // The bound: within the budget plus what was in flight when it ran out.
  expect(spent).toBeLessThanOrEqual(budget + concurrency * caseCost + 1e-12);
  // Judge spend counts: on target spend alone 12 cases would fit; with it, exactly the 8 that do.
  expect(started).toHaveLength(8);
  expect(spent).toBeLessThanOrEqual(budget + 1e-12);
  for (const r of started) expect(r.outcome).toBe('passed');
  expect(target.requests.length - before).toBe(8);
  const skipped = rows.filter(notStarted);
  expect(skipped).toHaveLength(12);
  for (const r of skipped) {
    expect(r.outcome).toBe('error');
    expect(r.error?.retryable).toBe(false);
    expect(r.usage.cost_usd).toBe(0);
  }
  const summary = summaryOf(bundle);
  expect(summary.budget).toMatchObject({ limit_usd: budget, exhausted: true, not_started: 12 });
  expect(summary.budget?.spent_usd).toBeCloseTo(spent, 12);
  expect(summary.budget?.reserved_peak_usd).toBeLessThanOrEqual(budget + 1e-12);
  expect(run.stdout).toMatch(/budget ran out: \$0\.0085 of \$0\.0085 spent; 12 case\(s\) not started/);
  return bundle;
};

describe('eval run --budget-usd', () => {
  it('stops dispatch within the budget (judge spend counted), and --resume with more finishes the rest', async () => {
    const p = tempProject({
      'proctor.toml': `${judgeTarget()}${pricing}${judgePricing}`,
      'budget.eval.yaml': evalFile(),
    });
    try {
      const bundle = await runAtFortyPercent(p);
      // A summary rebuilt without the command still says it: `results show` reads the rows.
      const shown = await runCli(['results', 'show', bundle], { cwd: p.dir });
      expect(shown.stdout).toContain('budget ran out; 12 case(s) not started');
      expect(shown.stdout).toContain('not started: the budget of $0.0085 cannot cover it');
      const markdown = await runCli(['results', 'export', bundle, '--format', 'markdown'], { cwd: p.dir });
      expect(markdown.stdout).toContain('**Budget ran out:** 12 case(s) not started');

      const before = target.requests.length;
      const resumed = await runCli(['eval', 'run', '--resume', bundle, '--budget-usd', '1'], {
        cwd: p.dir,
        timeoutMs: 90_000,
      });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('Resume: running 12 case(s)');
      expect(target.requests.length - before).toBe(12);
      const rows = indexRows<IndexRow>(bundle);
      const final = rows.filter((r) => !notStarted(r));
      // Every case ran exactly once across the two commands, and the latest row of each passed.
      expect(final).toHaveLength(cases);
      expect(new Set(final.map((r) => r.key)).size).toBe(cases);
      const summary = summaryOf(bundle);
      expect(summary.counts).toMatchObject({ total: cases, passed: cases, error: 0 });
      expect(summary.budget).toMatchObject({ limit_usd: 1, exhausted: false, not_started: 0 });
      expect(summary.budget?.spent_usd).toBeCloseTo(12 * caseCost, 12);
      expect(resumed.stdout).toContain('budget: $0.0127 of $1.0000 spent');
    } finally {
      p.remove();
    }
  }, 120_000);

  it('refuses a budget over a model without a price: exit 2 naming it, nothing run or written', async () => {
    const p = tempProject({
      // [defaults] budget_usd asks for the budget as --budget-usd would.
      'proctor.toml': `${judgeTarget()}budget_usd = 0.5\n${pricing}`,
      'budget.eval.yaml': evalFile(),
    });
    try {
      const before = target.requests.length + judge.requests.length;
      const run = await runCli(['eval', 'run', 'budget.eval.yaml'], { cwd: p.dir });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('openai:judge-model ("grader")');
      expect(run.stderr).toContain('add [pricing."openai:judge-model"]');
      expect(p.exists('.proctor')).toBe(false);
      expect(target.requests.length + judge.requests.length).toBe(before);
      // An http target naming no model, whose replies carry no cost, cannot be counted either.
      p.write('proctor.toml', `${judgeTarget()}${pricing}${judgePricing}`);
      p.write(
        'http.eval.yaml',
        `targets: [{ label: api, kind: http, url: "${target.url}/chat/completions" }]\nprompts: [hi]\ntests: [{ assert: [{ type: contains, value: hi }] }]\n`,
      );
      const http = await runCli(['eval', 'run', 'http.eval.yaml', '--budget-usd', '1'], { cwd: p.dir });
      expect(http.code).toBe(2);
      expect(http.stderr).toContain('target "api" (no model) has no price');
      expect(http.stderr).toContain('response.usage.cost');
      expect(p.exists('.proctor')).toBe(false);
      // Without a budget the same project runs, its judge's cost recorded as unknown.
      p.write('proctor.toml', `${judgeTarget()}${pricing}`);
      const free = await runCli(['eval', 'run', 'budget.eval.yaml', '-n', '1'], { cwd: p.dir });
      expect(free.code, free.stderr).toBe(0);
      expect(free.stderr).toContain('no price for openai:judge-model');
    } finally {
      p.remove();
    }
  }, 60_000);
});

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');
const unavailable = postgres?.unavailable ?? (await redisProblem());

describe.skipIf(unavailable !== undefined)(`eval run --budget-usd on the queue runner ${unavailable ?? ''}`, () => {
  it('stops dispatch within the budget as the local runner does', async () => {
    const toml = `${judgeTarget()}${pricing}${judgePricing}`;
    const options = {
      files: { 'budget.eval.yaml': evalFile() },
      toml,
      workerArgs: ['--concurrency', String(concurrency)],
    };
    await withQueueFleet(postgres as StoreBackend, options, async (p) => {
      await runAtFortyPercent(p);
      const detached = await runCli(['eval', 'run', 'budget.eval.yaml', '--budget-usd', '1', '--detach'], {
        cwd: p.dir,
      });
      expect(detached.code).toBe(2);
      expect(detached.stderr).toContain(
        'a detached run (--detach, or the explorer starting one on the queue runner) cannot keep a budget',
      );
    });
  }, 120_000);
});
