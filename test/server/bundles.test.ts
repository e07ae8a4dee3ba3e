import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordGroup } from '../../src/bundle/groups.js';
import { withResultAt } from '../../src/bundle/result-pack.js';
import { type CaseResult, toIndexRow } from '../../src/bundle/row.js';
import { BundleWriter } from '../../src/bundle/writer.js';
import { launchChromium, screenshotDir } from '../support/browser.js';
import { rawRequest, type ServedExplorer, serveExplorer } from '../support/explorer.js';
import { type TempProject, tempProject } from '../support/project.js';
import { seedGroup } from '../support/seed-results.js';

let project: TempProject;
let served: ServedExplorer;
const get = async <T>(p: string): Promise<T> => JSON.parse((await rawRequest(served.port, p)).body) as T;
const secret = 'TOP-SECRET-4711';

const aRow = (groupId: string, key: string, outcome: 'passed' | 'failed', artifacts = `cases/${key}/1`) =>
  toIndexRow({
    identity: { eval: 'evals/ci.eval.yaml', test: key, prompt: 'p', target: 'alpha', sample: 0 },
    key,
    fingerprint: 'f',
    outcome,
    score: outcome === 'passed' ? 1 : 0,
    error: null,
    attempts: 1,
    durationMs: 3,
    usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.5 },
    runId: `${groupId}-${key}`,
    groupId,
    startedAt: 1_700_000_000_000,
    finishedAt: 1_700_000_000_000,
    artifacts,
  } satisfies CaseResult);

const resultJson = (output: string) =>
  JSON.stringify({
    output,
    steps: [{ stepId: 'verify', status: 'completed', output: { results: [{ id: 'eq', pass: true, reason: 'same' }] } }],
  });

beforeAll(async () => {
  project = tempProject({ 'proctor.toml': '', 'secret.txt': secret, 'outside/result.json': resultJson(secret) });
  await seedGroup(project.path('.proctor/proctor.db'), 'g-store', [
    { key: 's1', test: 's1', target: 'alpha', outcome: 'passed' },
  ]);
  // A bundle from CI: its run is in no store here.
  const ci = project.path('.proctor/results/ci-run');
  const w = new BundleWriter(ci);
  w.writeArtifacts('k1', 1, { 'result.json': resultJson('bundle answer'), 'stdout.txt': 'hello' });
  symlinkSync(project.path('secret.txt'), path.join(ci, 'cases/k1/1/leak.txt'));
  w.appendLines([JSON.stringify(aRow('g-ci', 'k1', 'passed'))]);
  // A case with nothing but its result: packed, no folder.
  w.writeCase('k2', 1, { 'result.json': resultJson('second') }, JSON.stringify(aRow('g-ci', 'k2', 'failed')));
  w.flush();
  // A row whose artifacts path leaves the bundle, and one whose case folder is a link out of it.
  w.appendLines([JSON.stringify(aRow('g-ci', 'k3', 'failed', '../../..'))]);
  mkdirSync(path.join(ci, 'cases/k4'), { recursive: true });
  symlinkSync(project.path('outside'), path.join(ci, 'cases/k4/1'));
  w.appendLines([JSON.stringify(aRow('g-ci', 'k4', 'passed'))]);
  // A packed result's place out of the pack (a bundle can come from anywhere): no result, not an error.
  w.appendLines([withResultAt(JSON.stringify(aRow('g-ci', 'k5', 'passed')), [1_000_000, 40])]);
  w.close();
  // The store's own run has its bundle too: it is listed once, from the store.
  const own = project.path('.proctor/results/g-store');
  recordGroup(own, 'g-store');
  new BundleWriter(own).appendLines([JSON.stringify(aRow('g-store', 'bundled-only', 'failed'))]);
  writeFileSync(project.path('.proctor/results/not-a-bundle.txt'), 'x');
  served = await serveExplorer(project.dir);
});

afterAll(async () => {
  await served?.stop();
  project?.remove();
});

interface CaseView {
  attempts: {
    output: { text: string } | null;
    graders: { id: string }[];
    artifacts: { name: string }[];
    artifactsUrl: string;
    result: unknown;
  }[];
}

describe('proctor serve: runs only a bundle folder holds', () => {
  it('lists them beside the store runs, with their cases, once each', async () => {
    const { runs } = await get<{
      runs: { groupId: string; total: number; passed: number; cost: unknown; startedAt: number }[];
    }>('/api/v1/runs');
    expect(runs.map((r) => r.groupId).sort()).toEqual(['g-ci', 'g-store']);
    expect(runs.find((r) => r.groupId === 'g-ci')).toMatchObject({
      total: 5,
      passed: 3,
      cost: { targetUsd: 2.5, judgeUsd: null },
      // When it ran, from its rows, not when the explorer indexed it.
      startedAt: 1_700_000_000_000,
    });
    expect(runs.find((r) => r.groupId === 'g-store')?.total).toBe(1);
    const page = await get<{ total: number; rows: { caseKey: string }[] }>('/api/v1/runs/g-ci/cases?outcome=failed');
    expect(page.rows.map((r) => r.caseKey)).toEqual(['k2', 'k3']);
    // A store run compares with a bundle run: each side is read where it lives.
    const { counts } = await get<{ counts: Record<string, number> }>('/api/v1/compare?base=g-store&head=g-ci');
    expect(counts).toMatchObject({ common: 0, only_in_base: 1, only_in_head: 5 });
  });

  it('shows a case from its bundle folder and serves its artifacts by manifest name', async () => {
    const { attempts } = await get<CaseView>('/api/v1/runs/g-ci/cases/k1');
    const [a] = attempts;
    expect(a?.output?.text).toBe('bundle answer');
    expect(a?.graders.map((g) => g.id)).toEqual(['eq']);
    // The symlink is not in the manifest.
    expect(a?.artifacts.map((f) => f.name)).toEqual(['result.json', 'stdout.txt']);
    const url = new URL(a?.artifactsUrl ?? '', served.url).pathname;
    const ok = await rawRequest(served.port, `${url}/stdout.txt`);
    expect([ok.status, ok.body, ok.headers['content-type'], ok.headers['content-security-policy']]).toEqual([
      200,
      'hello',
      'text/plain; charset=utf-8',
      'sandbox',
    ]);
    const head = await rawRequest(served.port, `${url}/result.json?head=5`);
    expect([head.body, head.headers['x-artifact-length']]).toEqual([
      '{"out',
      String(resultJson('bundle answer').length),
    ]);
  });

  it('shows a packed case from the bundle pack: its result.json listed, previewed and downloaded whole', async () => {
    expect(existsSync(path.join(project.path('.proctor/results/ci-run'), 'cases/k2'))).toBe(false);
    const { attempts } = await get<CaseView>('/api/v1/runs/g-ci/cases/k2');
    const [a] = attempts;
    expect(a?.output?.text).toBe('second');
    expect(a?.graders.map((g) => g.id)).toEqual(['eq']);
    expect(a?.artifacts).toEqual([{ name: 'result.json', size: resultJson('second').length }]);
    const url = new URL(a?.artifactsUrl ?? '', served.url).pathname;
    const head = await rawRequest(served.port, `${url}/result.json?head=5`);
    expect([head.status, head.body, head.headers['x-artifact-length']]).toEqual([
      200,
      '{"out',
      String(resultJson('second').length),
    ]);
    const whole = await rawRequest(served.port, `${url}/result.json?download=1`);
    expect([whole.status, whole.body, whole.headers['content-disposition']]).toEqual([
      200,
      resultJson('second'),
      'attachment; filename="result.json"',
    ]);
    expect((await rawRequest(served.port, `${url}/stdout.txt`)).status).toBe(404);
  });

  it('reads a packed result whose place is out of the pack as none', async () => {
    const { attempts } = await get<CaseView>('/api/v1/runs/g-ci/cases/k5');
    expect([attempts[0]?.artifacts, attempts[0]?.result, attempts[0]?.output]).toEqual([[], null, null]);
    const url = new URL(attempts[0]?.artifactsUrl ?? '', served.url).pathname;
    expect((await rawRequest(served.port, `${url}/result.json`)).status).toBe(404);
  });

  it('refuses traversal, encoded slashes, absolute paths and symlinks out of the bundle with 404', async () => {
    const { attempts } = await get<CaseView>('/api/v1/runs/g-ci/cases/k1');
    const url = new URL(attempts[0]?.artifactsUrl ?? '', served.url).pathname;
    for (const p of attacks(url)) {
      const res = await rawRequest(served.port, p);
      expect([400, 404], p).toContain(res.status);
      expect(res.body, p).not.toContain(secret);
    }
    for (const key of ['k3', 'k4']) {
      const { attempts: outside } = await get<CaseView>(`/api/v1/runs/g-ci/cases/${key}`);
      expect([outside[0]?.artifacts, outside[0]?.result, outside[0]?.output], key).toEqual([[], null, null]);
      const base = new URL(outside[0]?.artifactsUrl ?? '', served.url).pathname;
      for (const name of ['result.json', 'secret.txt']) {
        const res = await rawRequest(served.port, `${base}/${name}`);
        expect(res.status, `${key}/${name}`).toBe(404);
        expect(res.body).not.toContain(secret);
      }
    }
  });

  it('in Chromium: the case page offers only the manifest; its own requests for links and traversals get 404', async () => {
    const chrome = await launchChromium();
    const shots = screenshotDir('explorer-bundle');
    try {
      const page = await chrome.context.newPage();
      await page.goto(`${served.url}runs/g-ci/cases/k1`);
      await page.getByText('stdout.txt').waitFor();
      expect(await page.locator('main').textContent()).not.toContain('leak.txt');
      await page.getByRole('button', { name: 'preview' }).last().click();
      await expect.poll(() => page.locator('[data-testid=artifact-preview]').textContent()).toBe('hello');
      await page.screenshot({ path: path.join(shots.dir, 'bundle-case.png'), fullPage: true });
      // A packed case: its result.json listed and previewed like a folder's file.
      await page.goto(`${served.url}runs/g-ci/cases/k2`);
      await page.getByText('result.json').waitFor();
      await page.getByRole('button', { name: 'preview' }).last().click();
      await expect
        .poll(() => page.locator('[data-testid=artifact-preview]').textContent())
        .toContain('"output":"second"');
      await page.screenshot({ path: path.join(shots.dir, 'bundle-packed-case.png'), fullPage: true });
      await page.goto(`${served.url}runs/g-ci/cases/k1`);
      await page.getByText('stdout.txt').waitFor();
      const { attempts } = await get<CaseView>('/api/v1/runs/g-ci/cases/k1');
      const answers = await page.evaluate(
        (paths) =>
          Promise.all(
            paths.map(async (p) => fetch(p).then(async (r) => ({ p, status: r.status, body: await r.text() }))),
          ),
        attacks(attempts[0]?.artifactsUrl ?? ''),
      );
      for (const a of answers) {
        expect([400, 404], a.p).toContain(a.status);
        expect(a.body, a.p).not.toContain(secret);
      }
    } finally {
      await chrome.close();
      shots.done();
    }
  });
});

/** Requests for files out of a case's artifact folder `url`: a link in it, traversals, absolute paths. */
const attacks = (url: string) => [
  `${url}/leak.txt`,
  `${url}/..%2f..%2f..%2f..%2fsecret.txt`,
  `${url}/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.txt`,
  `${url}/..%5c..%5csecret.txt`,
  `${url}/%2F${encodeURIComponent(project.path('secret.txt').slice(1))}`,
  `${url}//etc/passwd`,
  `${url}/../../../../secret.txt`,
  `${url}/constructor`,
  url.replace('/k1/', '/k2/'),
];
