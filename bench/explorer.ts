// The explorer on a big run (issue 11): `proctor serve` over a store holding two 100,000-case eval runs.
//   npx tsx bench/explorer.ts [--cases 100000] [--samples 30] [--compare-samples 5]
// Seeds the store in one transaction per run, starts the built CLI's server, then measures in Chromium the time
// from navigation to the first case rows painted (cold, then warm), over HTTP the latency of the run page's
// requests (p50 / p95 of `samples` serial calls each), the comparison of the two runs, and the server's resident
// memory before and after it.
// Goals: first rows < 1 s; API first page < 100 ms; a filter or text query < 300 ms; memory flat in run size.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { launchChromium } from '../test/support/browser.js';
import { serveExplorer } from '../test/support/explorer.js';
import { tempProject } from '../test/support/project.js';
import { manyCases, seedGroup } from '../test/support/seed-results.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '100000' },
    samples: { type: 'string', default: '30' },
    'compare-samples': { type: 'string', default: '5' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log('npx tsx bench/explorer.ts [--cases 100000] [--samples 30] [--compare-samples 5]');
  process.exit(0);
}
const cases = Number(values.cases);
const samples = Number(values.samples);
const compareSamples = Number(values['compare-samples']);

const project = tempProject();
writeFileSync(project.path('proctor.toml'), '');
let t = Date.now();
await seedGroup(project.path('.proctor/proctor.db'), 'big', manyCases(cases));
console.log(`seeded ${cases} cases in ${Date.now() - t} ms`);
// The head run: every 97th case flipped (passed ↔ failed), the first 100 keys gone, 100 new ones.
await seedGroup(
  project.path('.proctor/proctor.db'),
  'big2',
  (function* () {
    let i = 0;
    for (const c of manyCases(cases)) {
      if (i >= 100) yield i % 97 === 0 ? { ...c, outcome: c.outcome === 'passed' ? 'failed' : 'passed' } : c;
      i++;
    }
    for (let j = 0; j < 100; j++) yield { key: `new${j}`, test: `new${j}`, target: 'alpha', outcome: 'passed' };
  })(),
);

const served = await serveExplorer(project.dir);
const rssMb = () =>
  Math.round(
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${served.cli.child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024,
  );
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

try {
  const chrome = await launchChromium();
  for (const label of ['cold', 'warm', 'warm']) {
    const page = await chrome.context.newPage();
    t = Date.now();
    await page.goto(`${served.url}runs/big`);
    await page.locator('.vt-row[data-key]').first().waitFor();
    console.log(`run page, first rows painted (${label}): ${Date.now() - t} ms`);
    await page.close();
  }
  await chrome.close();

  const last = Math.max(0, cases - 200);
  const requests: [string, string][] = [
    ['runs list', '/api/v1/runs'],
    ['run summary', '/api/v1/runs/big'],
    ['cases, first page (200)', '/api/v1/runs/big/cases?limit=200'],
    ['cases, last page', `/api/v1/runs/big/cases?offset=${last}&limit=200`],
    ['cases, outcome+target filter', '/api/v1/runs/big/cases?outcome=failed&target=beta&limit=200'],
    ['cases, error kind filter', '/api/v1/runs/big/cases?error_kind=timeout&limit=200'],
    ['cases, text query', '/api/v1/runs/big/cases?q=needle-4242&limit=200'],
    ['matrix', '/api/v1/runs/big/matrix'],
    ['run cost (target | judge)', '/api/v1/runs/big/cost'],
    ['case page', '/api/v1/runs/big/cases/k004242'],
  ];
  const measure = async (name: string, path: string, n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      const res = await fetch(`${served.url}${path.slice(1)}`);
      await res.arrayBuffer();
      times.push(performance.now() - start);
    }
    // The first call of a query pays for its count; later ones reuse it while the run has no new commit.
    console.log(
      `${name.padEnd(30)} first ${times[0]?.toFixed(1)} ms  p50 ${quantile(times, 0.5)?.toFixed(1)} ms  p95 ${quantile(times, 0.95)?.toFixed(1)} ms`,
    );
  };
  for (const [name, path] of requests) await measure(name, path, samples);
  console.log(`server RSS before the compare: ${rssMb()} MB`);
  await measure(`compare, two ${cases}-case runs`, '/api/v1/compare?base=big&head=big2', compareSamples);
  console.log(`server RSS after the compare: ${rssMb()} MB`);
} finally {
  await served.stop();
  project.remove();
}
