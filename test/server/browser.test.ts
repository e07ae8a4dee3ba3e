import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshotDir, type TestBrowser } from '../support/browser.js';
import { type ServedExplorer, serveExplorer } from '../support/explorer.js';
import { type TempProject, tempProject } from '../support/project.js';
import { manyCases, type SeedCase, seedGroup } from '../support/seed-results.js';

const xss = [
  '<img src=x onerror="window.__pwned=1">',
  '<script>window.__pwned=1</script>',
  '[x](javascript:window.__pwned=1)',
  '<a href="javascript:window.__pwned=1">click</a>',
  '<svg onload="window.__pwned=1"></svg>',
].join('\n');

// 3 regressions (passed → failed/error) and 2 fixes between base and head, the rest unchanged.
const compareSides = (side: 'base' | 'head'): SeedCase[] =>
  Array.from({ length: 20 }, (_, i) => {
    const flip =
      side === 'base'
        ? ['passed', 'passed', 'passed', 'failed', 'error']
        : ['failed', 'error', 'failed', 'passed', 'passed'];
    return {
      key: `c${i}`,
      test: `case-${i}`,
      target: 'alpha',
      outcome: (i < 5 ? flip[i] : 'passed') as SeedCase['outcome'],
      output: `${side} says ${i}`,
    };
  });

// The assistant's reply, then a tool call whose name and arguments are hostile too.
const hostileTranscript: SeedCase['transcript'] = [
  { role: 'assistant', content: xss },
  Object.assign(
    { role: 'assistant', content: 'calling a tool' },
    {
      tool_calls: [{ id: 'call-1', function: { name: 'lookup<img src=x onerror=window.__pwned=1>', arguments: xss } }],
    },
  ),
];

let project: TempProject;
let served: ServedExplorer;
let chrome: TestBrowser;
const shots = screenshotDir('explorer');

const open = async (url: string): Promise<Page> => {
  const page = await chrome.context.newPage();
  await page.goto(url);
  return page;
};

beforeAll(async () => {
  project = tempProject({ 'proctor.toml': '' });
  const db = project.path('.proctor/proctor.db');
  await seedGroup(db, 'g-big', manyCases(100_000));
  await seedGroup(db, 'g-base', compareSides('base'));
  await seedGroup(db, 'g-head', compareSides('head'));
  await seedGroup(db, 'g-xss', [
    {
      key: 'x1',
      test: 'evil',
      target: 'alpha',
      outcome: 'failed',
      output: xss,
      transcript: hostileTranscript,
    },
  ]);
  served = await serveExplorer(project.dir);
  chrome = await launchChromium();
}, 120_000);

afterAll(async () => {
  await chrome?.close();
  await served?.stop();
  project?.remove();
  shots.done();
});

describe('proctor serve in Chromium', () => {
  it('paints the first rows of a 100,000-case run in under a second and scrolls to the last case', async () => {
    const page = await chrome.context.newPage();
    const start = Date.now();
    await page.goto(`${served.url}runs/g-big`);
    await page.locator('.vt-row[data-key]').first().waitFor();
    const paintMs = Date.now() - start;
    process.stdout.write(`100k run page: first rows after ${paintMs} ms\n`);
    // The goal is < 1 s, measured by bench/explorer.ts, not here: this bound only catches a page that hangs. Inside
    // the whole suite, on 2 shared cores at load 11, the cold paint was measured at 0.6–0.9 s.
    expect(paintMs).toBeLessThan(3000);
    await page.locator('[data-testid=targets]').waitFor();
    await page.screenshot({ path: path.join(shots.dir, 'run.png') });
    await page.getByText('▸ Test × target matrix').click();
    await page.locator('[data-testid=matrix] tbody tr').first().waitFor();
    // A page of tests, and an honest count of what is not shown (the run has 50,000 tests).
    expect(await page.locator('[data-testid=matrix] tbody tr').count()).toBe(200);
    expect(await page.locator('[data-testid=matrix-more]').textContent()).toContain('of more than');
    await page.getByRole('heading', { name: 'Test × target matrix' }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(shots.dir, 'matrix.png') });
    await page.locator('[data-testid=case-table]').focus();
    await page.keyboard.press('End');
    await page.locator('.vt-row[data-index="99999"][data-key="k099999"]').waitFor();
    expect(await page.locator('.vt-row').count()).toBeLessThan(200);
    await page.close();
  });

  it('keeps the case filters in the URL across a reload', async () => {
    const page = await open(`${served.url}runs/g-big`);
    await page.locator('select[aria-label=outcome]').selectOption('failed');
    await page.locator('select[aria-label=target]').selectOption('beta');
    const expected = [...manyCases(100_000)].filter((c) => c.outcome === 'failed' && c.target === 'beta').length;
    const count = page.locator('[data-testid=case-count]');
    await expect.poll(() => count.textContent(), { timeout: 10_000 }).toBe(`${expected.toLocaleString('en')} cases`);
    expect(page.url()).toContain('outcome=failed');
    await page.reload();
    await expect.poll(() => count.textContent(), { timeout: 10_000 }).toBe(`${expected.toLocaleString('en')} cases`);
    await page.locator('.vt-row[data-key]').first().waitFor();
    expect(await page.locator('.vt-row[data-key] .badge').allTextContents()).toSatisfy((b: string[]) =>
      b.every((t) => t === 'failed'),
    );
    await page.close();
  });

  it('renders hostile output and transcripts as text: nothing runs, everything is visible', async () => {
    const page = await open(`${served.url}runs/g-xss/cases/x1`);
    await page.locator('[data-testid=output]').waitFor();
    expect(await page.locator('[data-testid=output]').textContent()).toBe(xss);
    expect(await page.locator('[data-testid=message]').first().textContent()).toContain(
      '<script>window.__pwned=1</script>',
    );
    // The tool call is shown, as text: its name and its arguments.
    const call = page.locator('[data-testid=tool-call]');
    expect(await call.locator('.role').textContent()).toBe('tool call lookup<img src=x onerror=window.__pwned=1>');
    expect(await call.locator('pre').textContent()).toBe(xss);
    await page.locator('[data-testid=output]').click();
    await page.locator('[data-testid=message]').first().click();
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('main img, main script, main svg').count()).toBe(0);
    await page.screenshot({ path: path.join(shots.dir, 'case.png'), fullPage: true });
    await page.close();
  });

  it('compare shows exactly the seeded regressions and fixes, and both outputs side by side', async () => {
    const page = await open(`${served.url}compare?base=g-base&head=g-head`);
    await page.locator('[data-testid=count-regressed]').waitFor();
    expect(await page.locator('[data-testid=count-regressed]').textContent()).toBe('3');
    expect(await page.locator('[data-testid=count-fixed]').textContent()).toBe('2');
    expect(await page.locator('[data-testid=flips] tbody tr').count()).toBe(5);
    expect(await page.locator('tr.flip.regressed').count()).toBe(3);
    expect(await page.locator('tr.flip.fixed').count()).toBe(2);
    await page.locator('tr.flip.regressed').first().click();
    const diff = page.locator('[data-testid=diff]');
    await expect.poll(() => diff.textContent(), { timeout: 10_000 }).toContain('head says 0');
    expect(await diff.textContent()).toContain('base says 0');
    await page.screenshot({ path: path.join(shots.dir, 'compare.png'), fullPage: true });
    await page.close();
  });

  it('answers a rebinding name with 421, the page and its API alike', async () => {
    const page = await chrome.context.newPage();
    const res = await page.goto(`http://rebind.test:${served.port}/`);
    expect(res?.status()).toBe(421);
    const api = await page.evaluate(async () => (await fetch('/api/v1/runs')).status);
    expect(api).toBe(421);
    const list = await open(served.url);
    await list.locator('tr[data-run="g-big"]').waitFor();
    await list.screenshot({ path: path.join(shots.dir, 'runs.png') });
    // Every seeded run has a failed or errored case: the status filter keeps all of them, or none.
    await list.locator('select[aria-label=status]').selectOption('all passed');
    expect(await list.locator('tr[data-run]').count()).toBe(0);
    await list.locator('select[aria-label=status]').selectOption('with failures');
    expect(await list.locator('tr[data-run]').count()).toBe(4);
    await page.close();
    await list.close();
  });
});
