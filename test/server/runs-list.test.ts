import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.js';
import { rawRequest, type ServedExplorer, serveExplorer } from '../support/explorer.js';
import { type TempProject, tempProject } from '../support/project.js';
import { seedGroup } from '../support/seed-results.js';

const groups = Array.from({ length: 205 }, (_, i) => `r${String(i).padStart(3, '0')}`);

let project: TempProject;
let served: ServedExplorer;

beforeAll(async () => {
  project = tempProject({ 'proctor.toml': '' });
  for (const g of groups)
    await seedGroup(project.path('.proctor/proctor.db'), g, [
      { key: 'a', test: 'a', target: 'alpha', outcome: 'passed' },
    ]);
  served = await serveExplorer(project.dir);
}, 120_000);

afterAll(async () => {
  await served?.stop();
  project?.remove();
});

interface Page {
  runs: { groupId: string; createdAt: number }[];
  more: boolean;
}

describe('proctor serve: the runs list', () => {
  it('pages from the newest run to the oldest, each once, in order', async () => {
    const seen: Page['runs'] = [];
    let url = '/api/v1/runs?limit=60';
    for (let pages = 0; pages < 10; pages++) {
      const page = JSON.parse((await rawRequest(served.port, url)).body) as Page;
      seen.push(...page.runs);
      const last = page.runs.at(-1);
      if (!page.more || !last) break;
      url = `/api/v1/runs?limit=60&before=${last.createdAt}&before_id=${last.groupId}`;
    }
    expect(seen.map((g) => g.groupId).sort()).toEqual(groups);
    const order = (a: Page['runs'][number], b: Page['runs'][number]) =>
      b.createdAt - a.createdAt || (b.groupId > a.groupId ? 1 : -1);
    expect(seen).toEqual([...seen].sort(order));
    for (const bad of ['limit=0', 'limit=201', 'before=12', 'before_id=r001', 'before=x&before_id=r001'])
      expect((await rawRequest(served.port, `/api/v1/runs?${bad}`)).status, bad).toBe(400);
  });

  it('shows the newest 200 runs and the older ones on request', async () => {
    const chrome = await launchChromium();
    try {
      const page = await chrome.context.newPage();
      await page.goto(served.url);
      await page.locator('tr[data-run]').first().waitFor();
      expect(await page.locator('tr[data-run]').count()).toBe(200);
      await page.getByText('Older runs…').click();
      await expect.poll(() => page.locator('tr[data-run]').count()).toBe(205);
      expect(await page.getByText('Older runs…').count()).toBe(0);
      expect(await page.locator('tr[data-run="r000"]').count()).toBe(1);
    } finally {
      await chrome.close();
    }
  });
});
