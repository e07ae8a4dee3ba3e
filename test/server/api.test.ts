import { chmodSync, existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { bundleResult } from '../support/bundle-result.js';
import { runCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { csrfOf, rawRequest, readEvents, type ServedExplorer, serveExplorer } from '../support/explorer.js';
import { startFakeModelServer } from '../support/fake-model-server.js';
import { type TempProject, tempProject } from '../support/project.js';
import { commitCases, manyCases, seedGroup } from '../support/seed-results.js';
import { type StoreBackend, storeBackends } from '../support/store-backends.js';

let project: TempProject;
let served: ServedExplorer;
const db = () => project.path('.proctor/proctor.db');
const get = async <T>(path: string): Promise<T> => JSON.parse((await rawRequest(served.port, path)).body) as T;

beforeAll(async () => {
  project = tempProject({ 'proctor.toml': '' });
  await seedGroup(db(), 'g-main', manyCases(1000));
  // A case retried: only its latest attempt is in the table; both are on its page.
  await seedGroup(db(), 'g-retry', [
    { key: 'r1', test: 'flaky', target: 'alpha', outcome: 'error', errorKind: 'timeout', attempt: 1 },
    { key: 'r1', test: 'flaky', target: 'alpha', outcome: 'passed', attempt: 2, output: '<b>final</b>' },
  ]);
  await seedGroup(db(), 'g-huge', [
    {
      key: 'h1',
      test: 'long',
      target: 'alpha',
      outcome: 'passed',
      output: 'the short answer',
      transcript: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'y'.repeat(10_000_000) },
        { role: 'assistant', content: 'after the long one' },
      ],
    },
    // Cut by the store's cap: its tail (the marker line) is not JSON, so the whole would not parse.
    {
      key: 'h2',
      test: 'cut',
      target: 'alpha',
      outcome: 'passed',
      output: 'answer before the cut',
      transcript: [
        { role: 'user', content: 'first words' },
        ...Array(50_000).fill({ role: 'assistant', content: 'z'.repeat(100) }),
      ],
      cutResultAt: 2_000_000,
    },
  ]);
  // The seeded case's instance journals a resource whose record is larger than a page reads of an entry.
  const store = await openSqliteStore(db());
  await store.appendJournal({
    instanceId: 'i-g-huge-0',
    seq: 1,
    stepId: 'ask',
    attempt: 1,
    ops: [{ op: 'set', path: 'resources.ask', value: { log: 'r'.repeat(400_000) } }],
    output: { kept: 'o'.repeat(400_000) },
    createdAt: 1,
  });
  await store.close();
  await seedGroup(db(), 'g-cost', [
    { key: 'c1', test: 'a', target: 'alpha', outcome: 'passed', costUsd: 0.5, judgeCostUsd: 0.125 },
    { key: 'c1', test: 'a', target: 'alpha', outcome: 'passed', attempt: 2, costUsd: 0.25, judgeCostUsd: 0.125 },
  ]);
  served = await serveExplorer(project.dir);
});

afterAll(async () => {
  await served?.stop();
  project?.remove();
});

/** The keys manyCases gives cases `from` … `from + n - 1`. */
const keys = (from: number, n: number) => Array.from({ length: n }, (_, i) => `k${String(from + i).padStart(6, '0')}`);

interface CasePage {
  total: number;
  rows: { caseKey: string; outcome: string; target: string; seq: number }[];
}

describe('proctor serve: API', () => {
  it('lists runs with counts and pages the case table on the server, filters included', async () => {
    const { runs } = await get<{
      runs: { groupId: string; total: number; passed: number; failed: number; error: number }[];
    }>('/api/v1/runs');
    const main = runs.find((r) => r.groupId === 'g-main');
    expect(main).toMatchObject({ total: 1000, error: 20, failed: 140, passed: 840 });

    const first = await get<CasePage>('/api/v1/runs/g-main/cases?limit=100');
    expect(first.total).toBe(1000);
    expect(first.rows.map((r) => r.caseKey)).toEqual(keys(0, 100));
    const last = await get<CasePage>('/api/v1/runs/g-main/cases?offset=990&limit=100');
    // Pages past the middle are read from the end: the same rows in the same order.
    expect(last.rows.map((r) => r.caseKey)).toEqual(keys(990, 10));
    const middle = await get<CasePage>('/api/v1/runs/g-main/cases?offset=600&limit=50');
    expect([middle.total, middle.rows.map((r) => r.caseKey)]).toEqual([1000, keys(600, 50)]);
    expect((await get<CasePage>('/api/v1/runs/g-main/cases?offset=1000&limit=50')).rows).toEqual([]);

    const failed = await get<CasePage>('/api/v1/runs/g-main/cases?outcome=failed&target=beta');
    expect(failed.total).toBe(failed.rows.length);
    expect(failed.rows.every((r) => r.outcome === 'failed' && r.target === 'beta')).toBe(true);
    expect(failed.total).toBe([...manyCases(1000)].filter((c) => c.outcome === 'failed' && c.target === 'beta').length);
    const { cells, complete } = await get<{
      cells: { test: string; target: string; total: number }[];
      complete: boolean;
    }>('/api/v1/runs/g-main/matrix');
    expect([cells.length, complete]).toEqual([1000, true]);
    expect(cells.every((c) => c.total === 1)).toBe(true);
    const errors = await get<CasePage>('/api/v1/runs/g-main/cases?error_kind=timeout');
    expect(errors.total).toBe(20);
    // Text search reaches the artifacts (the output lives in result.json), and % is literal.
    const needle = await get<CasePage>('/api/v1/runs/g-main/cases?q=needle-4242');
    expect(needle.total).toBe(0);
    const hit = await get<CasePage>('/api/v1/runs/g-main/cases?q=answer%20999');
    expect(hit.rows.map((r) => r.caseKey)).toEqual(['k000999']);
    expect((await get<CasePage>('/api/v1/runs/g-main/cases?q=%25')).total).toBe(0);
    expect((await rawRequest(served.port, '/api/v1/runs/g-main/cases?limit=5000')).status).toBe(400);
  });

  it("compares two runs case by case, and a live run's comparison follows its new commits", async () => {
    const store = await openSqliteStore(db());
    const aCase = (key: string, outcome: 'passed' | 'failed') => ({ key, test: key, target: 'alpha', outcome });
    try {
      await commitCases(store, 'cmp-base', [aCase('a', 'passed'), aCase('b', 'passed')], 'cmp-base');
      await commitCases(store, 'cmp-head', [aCase('a', 'passed')], 'cmp-head');
      // b is still queued in head: the run is live.
      await store.createRuns(
        [{ runId: 'cmp-pending', groupId: 'cmp-head', taskId: 'eval', instanceId: 'i-cmp-pending', caseKey: 'b' }].map(
          (r) => ({ ...r, target: 'alpha', metadata: {}, spec: {}, context: {} }),
        ),
      );
      type Counts = { counts: Record<string, number> };
      const url = '/api/v1/compare?base=cmp-base&head=cmp-head';
      expect((await get<Counts>(url)).counts).toMatchObject({ common: 1, unchanged: 1, only_in_base: 1 });
      await commitCases(store, 'cmp-head', [aCase('b', 'failed')], 'cmp-late');
      expect((await get<Counts>(url)).counts).toMatchObject({ common: 2, regressed: 1, only_in_base: 0 });
    } finally {
      await store.close();
    }
  });

  it('shows what each run spent, target and judges apart, every attempt counted', async () => {
    const { runs } = await get<{ runs: { groupId: string; cost: unknown }[] }>('/api/v1/runs');
    const cost = (id: string) => runs.find((r) => r.groupId === id)?.cost;
    expect(cost('g-cost')).toEqual({ targetUsd: 0.75, judgeUsd: 0.25 });
    expect(cost('g-main')).toEqual({ targetUsd: 0, judgeUsd: null });
    expect(await get('/api/v1/runs/g-cost/cost')).toEqual({ targetUsd: 0.75, judgeUsd: 0.25 });
  });

  it('shows a case by its latest attempt in the table and every attempt on its page', async () => {
    const table = await get<CasePage>('/api/v1/runs/g-retry/cases');
    expect(table.rows.map((r) => [r.caseKey, r.outcome])).toEqual([['r1', 'passed']]);
    const page = await get<{
      attempts: { attempt: number; output: { text: string }; artifacts: { name: string }[] }[];
    }>('/api/v1/runs/g-retry/cases/r1');
    expect(page.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(page.attempts[1]?.output.text).toBe('<b>final</b>');
    expect(page.attempts[1]?.artifacts.map((a) => a.name)).toEqual(['result.json']);
  });

  it('shows the first part of a 10 MB transcript without reading it whole, and the whole only as a download', async () => {
    const res = await rawRequest(served.port, '/api/v1/runs/g-huge/cases/h1');
    expect(res.body.length).toBeLessThan(1_500_000);
    const { attempts } = JSON.parse(res.body) as {
      attempts: {
        seq: number;
        output: { text: string };
        result: { shown: number; length: number; complete: boolean };
        steps: { transcript: { content: { text: string; truncated: boolean } }[] }[];
      }[];
    };
    const [a] = attempts;
    expect(a?.output.text).toBe('the short answer');
    // Only the head of the 10 MB result.json was read from the store: its messages up to there, the rest not.
    expect(a?.result).toMatchObject({ shown: 1024 * 1024, complete: false });
    expect(a?.result.length).toBeGreaterThan(10_000_000);
    const messages = a?.steps[0]?.transcript ?? [];
    expect(messages.map((m) => m.content.text.slice(0, 5))).toEqual(['go', 'yyyyy']);
    expect(messages[1]?.content.truncated).toBe(true);
    // The graders, past the head, are read in the database: only the verify step's results leave it.
    expect((a as unknown as { graders: { reason: string }[] }).graders.map((g) => g.reason)).toEqual(['seeded']);
    // An eval case journals only its resources: the page shows each entry's ops as a head, never the whole.
    const journal = (a as unknown as { journal: { stepId: string; ops: { text: string; truncated: boolean } }[] })
      .journal;
    expect(journal.map((j) => [j.stepId, j.ops.text.length, j.ops.truncated])).toEqual([['ask', 16 * 1024, true]]);
    expect(journal[0]?.ops.text).toMatch(/^\[\{"op":"set","path":"resources\.ask"/);
    // Its task page has its steps from its result, and the journal's entries as heads of their ops and output.
    const task = await rawRequest(served.port, '/api/v1/tasks/g-huge-0');
    expect(task.body.length).toBeLessThan(700_000);
    const taskPage = JSON.parse(task.body) as {
      journal: { stepId: string; ops: { length: number; truncated: boolean }; output: { truncated: boolean } }[];
    };
    expect(taskPage.journal.map((j) => [j.stepId, j.ops.truncated, j.output.truncated])).toEqual([['ask', true, true]]);
    expect(taskPage.journal[0]?.ops.length).toBeGreaterThan(400_000);
    expect(JSON.parse(task.body)).toMatchObject({
      recorded: [
        { stepId: 'ask', status: 'completed', attempts: 1 },
        { stepId: 'verify', status: 'completed', attempts: 1, results: [{ reason: 'seeded' }] },
      ],
    });
    const preview = await rawRequest(served.port, `/api/v1/artifacts/${a?.seq}/result.json?head=1000`);
    expect([preview.body.length, preview.headers['x-artifact-length']]).toEqual([1000, String(a?.result.length)]);
    const whole = await rawRequest(served.port, `/api/v1/artifacts/${a?.seq}/result.json?download=1`);
    expect(whole.headers['content-disposition']).toBe('attachment; filename="result.json"');
    expect(whole.body.length).toBe(a?.result.length);
    expect(whole.body).toContain('after the long one');
  });

  it('shows the first part of a result.json whose tail is not JSON (cut at the cap)', async () => {
    const { attempts } = await get<{
      attempts: {
        output: { text: string };
        result: { complete: boolean };
        steps: { transcript: { content: { text: string } }[] }[];
      }[];
    }>('/api/v1/runs/g-huge/cases/h2');
    const [a] = attempts;
    expect(a?.output.text).toBe('answer before the cut');
    expect(a?.result.complete).toBe(false);
    expect(a?.steps[0]?.transcript[0]?.content.text).toBe('first words');
    expect(a?.steps[0]?.transcript.length).toBeGreaterThan(1000);
  });

  it('serves artifacts by manifest name only: traversal, encoded slashes and absolute paths get 404', async () => {
    const { rows } = await get<CasePage>('/api/v1/runs/g-retry/cases');
    const seq = rows[0]?.seq;
    const ok = await rawRequest(served.port, `/api/v1/artifacts/${seq}/result.json`);
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(ok.headers['content-security-policy']).toBe('sandbox');
    expect(ok.body).toContain('<b>final</b>');
    for (const path of [
      `/api/v1/artifacts/${seq}/..%2f..%2fproctor.toml`,
      `/api/v1/artifacts/${seq}/%2e%2e%2fproctor.toml`,
      `/api/v1/artifacts/${seq}/..%5cproctor.toml`,
      `/api/v1/artifacts/${seq}/%2Fetc%2Fpasswd`,
      `/api/v1/artifacts/${seq}//etc/passwd`,
      `/api/v1/artifacts/${seq}/../../proctor.toml`,
      `/api/v1/artifacts/${seq}/constructor`,
      `/api/v1/artifacts/1e3/result.json`,
      '/api/v1/artifacts/999999/result.json',
    ]) {
      const res = await rawRequest(served.port, path);
      expect([400, 404], path).toContain(res.status);
      expect(res.body).not.toContain('final');
    }
  });

  it('refuses a foreign Host (DNS rebinding) with 421, prefixes included', async () => {
    for (const host of [
      'evil.test',
      `127.0.0.1.evil.test:${served.port}`,
      `localhost.evil:${served.port}`,
      '127.0.0.1',
    ]) {
      const res = await rawRequest(served.port, '/api/v1/runs', { headers: { host } });
      expect(res.status, host).toBe(421);
    }
    expect(
      (await rawRequest(served.port, '/api/v1/runs', { headers: { host: `localhost:${served.port}` } })).status,
    ).toBe(200);
  });

  it('takes a mutation only as JSON with the CSRF token from a same-origin page', async () => {
    const post = (headers: Record<string, string>, body = '{}') =>
      rawRequest(served.port, '/api/v1/runs/g-main/cancel', { method: 'POST', headers, body });
    const csrf = await csrfOf(served.port);
    expect((await post({ 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post({ 'content-type': 'application/x-www-form-urlencoded', 'x-proctor-csrf': csrf })).status).toBe(
      415,
    );
    expect((await post({ 'content-type': 'application/json' })).status).toBe(403);
    expect((await post({ 'content-type': 'application/json', 'x-proctor-csrf': 'guess' })).status).toBe(403);
    const foreign = { 'content-type': 'application/json', 'x-proctor-csrf': csrf };
    expect((await post({ ...foreign, origin: 'http://127.0.0.1:1' })).status).toBe(403);
    expect((await post({ ...foreign, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    const ok = await post({ ...foreign, origin: `http://127.0.0.1:${served.port}`, 'sec-fetch-site': 'same-origin' });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ requested: 0 });
    // A run starts only from eval files the project offers, never from a path the client names.
    const start = (body: unknown) =>
      rawRequest(served.port, '/api/v1/runs', { method: 'POST', headers: foreign, body: JSON.stringify(body) });
    const outside = await start({ evals: ['../../etc/x.eval.yaml'] });
    expect([outside.status, JSON.parse(outside.body).error]).toEqual([
      400,
      'not an eval file of this project: ../../etc/x.eval.yaml',
    ]);
    expect((await start({ evals: [] })).status).toBe(400);
    expect((await start({ evals: 'a' })).status).toBe(400);
  });

  it('ships its front end: every script and style from its own origin, the JavaScript under 60 KB gzipped', async () => {
    const index = (await rawRequest(served.port, '/')).body;
    const refs = [...index.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(refs.length).toBeGreaterThanOrEqual(2);
    expect(refs.filter((r) => !r.startsWith('/assets/'))).toEqual([]);
    const gzipped = async (ext: string) => {
      let bytes = 0;
      for (const ref of refs.filter((r) => r.endsWith(ext))) {
        const res = await rawRequest(served.port, ref);
        expect(res.status, ref).toBe(200);
        bytes += gzipSync(res.body, { level: 9 }).length;
      }
      return bytes;
    };
    expect(await gzipped('.js')).toBeLessThan(60 * 1024);
    expect(await gzipped('.css')).toBeLessThan(15 * 1024);
  });

  it('sends a strict CSP and no-store on the API', async () => {
    const res = await rawRequest(served.port, '/');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("object-src 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect((await rawRequest(served.port, '/api/v1/runs')).headers['cache-control']).toBe('no-store');
  });

  it('opens the explorer in the desktop browser with --open', async () => {
    // The desktop's opener, as xdg-open is found on PATH: this one writes down what it was asked to open.
    project.write('bin/xdg-open', '#!/bin/sh\necho "$1" > "$(dirname "$0")/opened"\n');
    chmodSync(project.path('bin/xdg-open'), 0o755);
    const s = await serveExplorer(project.dir, ['--open'], { PATH: `${project.path('bin')}:${process.env.PATH}` });
    try {
      const opened = await eventually(async () =>
        existsSync(project.path('bin/opened')) ? project.read('bin/opened').trim() : undefined,
      );
      expect(opened).toBe(s.url);
    } finally {
      await s.stop();
    }
  });

  it('refuses a non-loopback bind without a token (exit 2); with one, a request without it gets 401', async () => {
    const refused = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], { cwd: project.dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--host 0\.0\.0\.0 .*no token/);
    const open = await serveExplorer(project.dir, ['--host', '0.0.0.0', '--token', 's3cret-token']);
    try {
      expect((await rawRequest(open.port, '/api/v1/runs')).status).toBe(401);
      const authed = await rawRequest(open.port, '/api/v1/runs', { headers: { authorization: 'Bearer s3cret-token' } });
      expect(authed.status).toBe(200);
      expect(authed.body).not.toContain('s3cret-token');
      // Bound to every interface, it answers to this machine's name (what another machine types), still only with the token.
      const named = { host: `${hostname()}:${open.port}` };
      expect((await rawRequest(open.port, '/api/v1/runs', { headers: named })).status).toBe(401);
      const byName = await rawRequest(open.port, '/api/v1/runs', {
        headers: { ...named, authorization: 'Bearer s3cret-token' },
      });
      expect(byName.status).toBe(200);
    } finally {
      await open.stop();
    }
  });
});

describe('proctor serve: live events', () => {
  it('resumes from Last-Event-ID after a server restart with no duplicate and no missing result', async () => {
    const p = tempProject({ 'proctor.toml': '' });
    const file = p.path('.proctor/proctor.db');
    await seedGroup(file, 'live', manyCases(30));
    const commit = async (n: number) => {
      const store = await openSqliteStore(file);
      const cases = Array.from({ length: n }, (_, i) => ({
        key: `new${i}`,
        test: `new${i}`,
        target: 'alpha',
        outcome: 'passed' as const,
      }));
      await commitCases(store, 'live', cases, 'live-new');
      await store.close();
    };
    let s = await serveExplorer(p.dir);
    try {
      const url = () => `${s.url}api/v1/events?group=live`;
      const first = await readEvents(url(), {}, (es) => es.filter((e) => e.event === 'result').length >= 30);
      const seen = first.filter((e) => e.event === 'result').map((e) => Number(e.id));
      expect(seen).toHaveLength(30);
      await s.stop();
      await commit(12);
      s = await serveExplorer(p.dir);
      const lastId = String(seen.at(-1));
      const resumed = await readEvents(
        url(),
        { 'Last-Event-ID': lastId },
        (es) => es.filter((e) => e.event === 'result').length >= 12,
        5000,
      );
      const again = resumed.filter((e) => e.event === 'result').map((e) => Number(e.id));
      expect(again).toHaveLength(12);
      expect(resumed.some((e) => e.event === 'progress')).toBe(true);
      const all = [...seen, ...again];
      expect(new Set(all).size).toBe(all.length);
      const store = await openSqliteStore(file);
      const stored = (await store.readResults('live', 0, 1000)).map((r) => r.seq);
      await store.close();
      expect(all).toEqual(stored);
    } finally {
      await s.stop();
      p.remove();
    }
  });
});

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');

describe.skipIf(!postgres || postgres.unavailable)('proctor serve: live events on PostgreSQL', () => {
  it('resumes with no missing result when a transaction that drew a smaller seq commits after a later one', async () => {
    const db = await (postgres as StoreBackend).create();
    const p = tempProject({ 'proctor.toml': `[store]\nurl = "${db.url}"\n` });
    const { default: pg } = await import('pg');
    const slow = new pg.Client({ connectionString: db.url });
    await slow.connect();
    const keysOf = (events: { event: string; data: string }[]) =>
      events.filter((e) => e.event === 'result').map((e) => (JSON.parse(e.data) as { caseKey: string }).caseKey);
    let s: ServedExplorer | undefined;
    try {
      await commitCases(db.store, 'live', [{ key: 'a', test: 'a', target: 'alpha', outcome: 'passed' }], 'first');
      // Started first: opening a store waits for open transactions on its tables (its migration's locks).
      s = await serveExplorer(p.dir);
      await slow.query('begin');
      await slow.query(
        `insert into results (run_id, group_id, case_key, attempt, target, eval_path, outcome, row, files, committed_at)
         values ('slow', 'live', 'slow', 1, 'alpha', 'e', 'passed', '{}', '{}', 0)`,
      );
      await commitCases(db.store, 'live', [{ key: 'fast', test: 'fast', target: 'alpha', outcome: 'passed' }], 'fast');
      const url = () => `${s?.url}api/v1/events?group=live`;
      // While the slow transaction is open, `fast` (a later seq, committed) is held back: sent, it would move
      // the cursor past `slow`.
      const first = await readEvents(url(), {}, (es) => keysOf(es).length >= 2, 2000);
      expect(keysOf(first)).toEqual(['a']);
      await s.stop();
      await slow.query('commit');
      s = await serveExplorer(p.dir);
      const lastId = first.filter((e) => e.event === 'result').at(-1)?.id as string;
      const resumed = await readEvents(url(), { 'Last-Event-ID': lastId }, (es) => keysOf(es).length >= 2);
      expect(keysOf(resumed).sort()).toEqual(['fast', 'slow']);
    } finally {
      await s?.stop();
      await slow.end();
      p.remove();
      await db.remove();
    }
  });
});

describe('proctor serve: a prompt step', () => {
  it("shows the prompt and the reply as its transcript, which the case's result.json does not repeat", async () => {
    const model = await startFakeModelServer();
    const p = tempProject({
      'proctor.toml': '',
      'evals/a.eval.yaml': `targets: [{ label: model, kind: openai, base_url: "${model.url}", model: m, api_key: k }]
prompts: ["say {{ word }}"]
tests: [{ id: one, vars: { word: hi } }]
`,
    });
    try {
      const ran = await runCli(['eval', 'run', '-o', 'out'], { cwd: p.dir });
      expect(ran.code, ran.stderr).toBe(0);
      const [row] = p
        .read('out/index.jsonl')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { key: string; group_id: string; artifacts: string });
      const result = bundleResult<{ steps: { stepId: string; output: Record<string, unknown> }[] }>(
        p.path('out'),
        row ?? {},
      );
      const ask = result.steps.find((s) => s.stepId === 'prompt')?.output;
      expect(ask).toMatchObject({ prompt: 'say hi', text: 'echo: say hi' });
      expect(ask).not.toHaveProperty('transcript');
      const s = await serveExplorer(p.dir);
      try {
        const page = JSON.parse((await rawRequest(s.port, `/api/v1/runs/${row?.group_id}/cases/${row?.key}`)).body) as {
          attempts: { steps: { stepId: string; transcript: { role: string; content: { text: string } }[] }[] }[];
        };
        const shown = page.attempts[0]?.steps.find((st) => st.stepId === 'prompt')?.transcript;
        expect(shown?.map((m) => [m.role, m.content.text])).toEqual([
          ['user', 'say hi'],
          ['assistant', 'echo: say hi'],
        ]);
      } finally {
        await s.stop();
      }
    } finally {
      await model.close();
      p.remove();
    }
  });
});

describe('proctor serve: secrets', () => {
  it('answers no API request with a secret the project resolved from the environment', async () => {
    const secret = 'sk-explorer-secret-4711';
    const model = await startFakeModelServer();
    const p = tempProject({
      'proctor.toml': '',
      'evals/a.eval.yaml': `targets: [{ label: model, kind: openai, base_url: "${model.url}", model: m, api_key: "\${PROCTOR_TEST_KEY}" }]
prompts: [hello]
tests: [{ id: one }, { id: two }]
`,
    });
    const env = { PROCTOR_TEST_KEY: secret };
    try {
      const ran = await runCli(['eval', 'run'], { cwd: p.dir, env });
      expect(ran.code, ran.stderr).toBe(0);
      expect(model.requests[0]?.headers.authorization).toBe(`Bearer ${secret}`);
      const s = await serveExplorer(p.dir, [], env);
      try {
        const body = async (path: string) => (await rawRequest(s.port, path)).body;
        const { runs } = JSON.parse(await body('/api/v1/runs')) as { runs: { groupId: string }[] };
        const group = runs[0]?.groupId as string;
        const members = JSON.parse(await body(`/api/v1/runs/${group}/runs`)) as { runs: { runId: string }[] };
        expect(members.runs).toHaveLength(2);
        const task = await body(`/api/v1/tasks/${members.runs[0]?.runId}`);
        expect(task).toContain('"journal"');
        const answers = [
          await body('/api/v1/runs'),
          await body(`/api/v1/runs/${group}`),
          await body(`/api/v1/runs/${group}/runs`),
          await body(`/api/v1/runs/${group}/cases`),
          await body('/api/v1/project'),
          task,
          await body(`/api/v1/tasks/${members.runs[1]?.runId}`),
        ];
        for (const a of answers) expect(a).not.toContain(secret);
      } finally {
        await s.stop();
      }
    } finally {
      await model.close();
      p.remove();
    }
  });
});
