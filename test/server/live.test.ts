import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { launchChromium, screenshotDir, type TestBrowser } from '../support/browser.js';
import { startCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { type ServedExplorer, serveExplorer } from '../support/explorer.js';
import { type TempProject, tempProject } from '../support/project.js';

const tests = Array.from({ length: 40 }, (_, i) => `  - { id: t${i} }`).join('\n');
// Its middle step waits for a file the test creates, so the page is seen with a step pending, then done.
const gateTask = `id: gate
steps:
  - { id: first, type: exec, command: 'echo first' }
  - { id: gate, type: exec, command: 'until [ -f "$PROCTOR_TASK_DIR/open" ]; do sleep 0.1; done; echo through' }
  - { id: last, type: exec, command: 'echo last' }
`;
const evalFile = `targets:\n  - { label: slow, kind: cli, command: "sleep 0.3; echo ok" }\nprompts: [go]\nevaluate_options: { max_concurrency: 2 }\ntests:\n${tests}\n`;

/** A page on another local origin that tries to cancel the run: a form-like post, then a JSON fetch. */
const attacker = (port: number, group: string): Promise<Server> =>
  new Promise((resolve) => {
    const target = `http://127.0.0.1:${port}/api/v1/runs/${group}/cancel`;
    const html = `<!doctype html><script>
      (async () => {
        await fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: '{}' }).catch(() => {});
        await fetch(${JSON.stringify(target)}, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Proctor-CSRF': 'guess' }, body: '{}' }).catch(() => {});
        document.title = 'done';
      })();
    </script>`;
    const s = createServer((_req, res) => res.end(html)).listen(0, '127.0.0.1', () => resolve(s));
  });

let project: TempProject;
let served: ServedExplorer;
let chrome: TestBrowser;
let store: Store;
const shots = screenshotDir('explorer-live');

beforeAll(async () => {
  project = tempProject({ 'proctor.toml': '', 'evals/slow.eval.yaml': evalFile, 'gate.task.yaml': gateTask });
  served = await serveExplorer(project.dir);
  chrome = await launchChromium();
  store = await openSqliteStore(project.path('.proctor/proctor.db'));
});

afterAll(async () => {
  await store?.close();
  await chrome?.close();
  await served?.stop();
  project?.remove();
  shots.done();
});

describe('proctor serve: a live eval run', () => {
  it('starts from the UI, shows progress without reload, resists a cross-origin cancel, and stops on Cancel', async () => {
    const page = await chrome.context.newPage();
    await page.goto(served.url);
    await page.getByText('New run…').click();
    await page.getByText('evals/slow.eval.yaml').click();
    await page.screenshot({ path: path.join(shots.dir, 'new-run.png') });
    await page.getByText('Start run').click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    const group = decodeURIComponent(new URL(page.url()).pathname.split('/')[2] as string);

    // The run page and the runs list, each open once, watched together: their progress moves without a reload.
    const list = await chrome.context.newPage();
    await list.goto(served.url);
    const watch = async (progress: Locator) => {
      const done = async () => Number(/^(\d+)\//.exec((await progress.textContent()) ?? '')?.[1] ?? -1);
      const seen: number[] = [];
      await eventually(async () => {
        const n = await done();
        if (seen.at(-1) !== n) seen.push(n);
        return seen.filter((x) => x > 0).length >= 2 ? true : undefined;
      }, 30_000);
      return seen;
    };
    for (const seen of await Promise.all([
      watch(page.locator('[data-testid=progress]')),
      watch(list.locator(`tr[data-run="${group}"] [data-testid=progress]`)),
    ]))
      expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    await list.close();

    const evil = await attacker(served.port, group);
    try {
      const other = await chrome.context.newPage();
      await other.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      await other.waitForFunction("document.title === 'done'");
      await other.close();
    } finally {
      evil.close();
    }
    const runs = await store.listRuns({ groupId: group });
    expect(runs.some((r) => r.status === 'QUEUED' || r.status === 'RUNNING')).toBe(true);
    expect(runs.filter((r) => r.cancelRequestedAt !== null)).toEqual([]);

    await page.getByText('Cancel run').click();
    const after = await eventually(async () => {
      const all = await store.listRuns({ groupId: group });
      return all.every((r) => r.status !== 'QUEUED' && r.status !== 'RUNNING') ? all : undefined;
    }, 20_000);
    expect(after.filter((r) => r.status === 'CANCELED').length).toBeGreaterThan(0);
    expect(after.filter((r) => r.status === 'COMPLETED').length).toBeLessThan(40);

    // A case's task run: its steps as its result records them (an eval case journals only its resources).
    const finished = after.find((r) => r.status === 'COMPLETED');
    await page.goto(`${served.url}tasks/${finished?.runId}`);
    await page.getByText('Task run').waitFor();
    expect(await page.locator('main').textContent()).toContain('COMPLETED');
    expect(await page.locator('tr[data-step="prompt"] .badge').textContent()).toBe('completed');
    expect(await page.locator('tr[data-step="verify"] .badge').textContent()).toBe('completed');
    expect(await page.locator('main details').count()).toBe(0);
    await page.screenshot({ path: path.join(shots.dir, 'task.png'), fullPage: true });
    await page.goto(served.url);
    await page.locator(`tr[data-run="${group}"]`).waitFor();
    await page.screenshot({ path: path.join(shots.dir, 'runs-live.png') });
    await page.close();
  });

  it("shows a task run's steps finish one by one while it runs, then its final state, without a reload", async () => {
    const task = startCli(['task', 'run', 'gate.task.yaml'], { cwd: project.dir });
    try {
      const run = await eventually(async () => (await store.listRuns({})).find((r) => r.taskId === 'gate'));
      const page = await chrome.context.newPage();
      await page.goto(`${served.url}tasks/${run.runId}`);
      await page.evaluate(() => Object.assign(globalThis, { __samePage: true }));
      const state = (step: string) => page.locator(`tr[data-step="${step}"] .badge`);
      await expect.poll(() => state('first').textContent(), { timeout: 20_000 }).toBe('done');
      expect(await state('gate').textContent()).toBe('pending');
      expect(await state('last').textContent()).toBe('pending');
      expect(await page.locator('.toolbar .badge').textContent()).toBe('RUNNING');
      await page.screenshot({ path: path.join(shots.dir, 'task-running.png'), fullPage: true });

      project.write('open', '');
      await expect.poll(() => page.locator('.toolbar .badge').textContent(), { timeout: 20_000 }).toBe('COMPLETED');
      expect(await Promise.all(['first', 'gate', 'last'].map((s) => state(s).textContent()))).toEqual([
        'done',
        'done',
        'done',
      ]);
      expect(await page.locator('main details summary').allTextContents()).toEqual([
        expect.stringContaining('first'),
        expect.stringContaining('gate'),
        expect.stringContaining('last'),
      ]);
      expect(await page.evaluate(() => (globalThis as { __samePage?: boolean }).__samePage)).toBe(true);
      await page.screenshot({ path: path.join(shots.dir, 'task-done.png'), fullPage: true });
      await page.close();
      expect((await task.done).code).toBe(0);
    } finally {
      task.child.kill('SIGTERM');
    }
  });
});
