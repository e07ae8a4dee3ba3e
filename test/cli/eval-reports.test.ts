// What a run reports when it ends, for a person at a terminal and for CI: the failing cases with why, export
// files by extension (`--export`), a GitHub job summary, and a comparison with a base run.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/plan/csv.js';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { type TempProject, tempProject } from '../support/project.js';

let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer();
});
afterAll(async () => {
  await server.close();
});

const evalText = (wanted: Record<string, string>) => `
targets:
  - { label: model, kind: openai, base_url: "${server.url}", model: m, api_key: k }
prompts: ["{{ q }}"]
tests:
${Object.entries(wanted)
  .map(
    ([q, want]) =>
      `  - { id: ${q.replace(/\W/g, '') || 'x'}, vars: { q: "${q}" }, assert: [{ type: contains, value: "${want}" }] }`,
  )
  .join('\n')}
`;

describe('eval run reports', () => {
  let project: TempProject;
  const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: project.dir, env });
  const bundles = () => readdirSync(project.path('.proctor/results')).sort();

  beforeEach(() => {
    server.reset();
    project = tempProject({
      'a.eval.yaml': evalText({ alpha: 'alpha', beta: 'not-in-reply', '[[status:500 times:9]] gamma': 'gamma' }),
    });
  });
  afterEach(() => project.remove());

  it('lists each failing case with its reason, and `results show` defaults to the latest run', async () => {
    const run = await cli(['eval', 'run', 'a.eval.yaml', '-q']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/failed.*beta.*contains.*not-in-reply/);
    expect(run.stdout).toMatch(/error.*gamma.*http_5xx/);
    expect(run.stdout).not.toMatch(/alpha · p1.*passed/);
    const show = await cli(['results', 'show']);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/beta.*failed.*contains/);
    expect(show.stdout).toContain(bundles()[0]);
  });

  it('--export writes each file by its extension; an unknown extension is refused before anything runs', async () => {
    const refused = await cli(['eval', 'run', 'a.eval.yaml', '--export', 'out.docx']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('out.docx');
    expect(refused.stderr).toMatch(/\.json.*\.csv/);
    expect(project.exists('.proctor/results')).toBe(false);

    const files = ['out/r.json', 'out/r.jsonl', 'out/r.csv', 'out/r.xml', 'out/r.html', 'out/r.md'];
    const run = await cli(['eval', 'run', 'a.eval.yaml', '-q', ...files.flatMap((f) => ['--export', f])]);
    expect(run.code).toBe(1);
    const json = JSON.parse(project.read('out/r.json')) as { cases: { outcome: string }[] };
    expect(json.cases.map((c) => c.outcome).sort()).toEqual(['error', 'failed', 'passed']);
    expect(project.read('out/r.jsonl').trim().split('\n')).toHaveLength(3);
    expect(parseCsv(project.read('out/r.csv'))).toHaveLength(4);
    expect(project.read('out/r.xml')).toContain('<testsuites');
    expect(project.read('out/r.html')).toContain('<!doctype html>');
    expect(project.read('out/r.md')).toContain('### Failures (2)');
  });

  it('appends a Markdown summary for GitHub Actions, with regressions and fixes against --compare', async () => {
    expect((await cli(['eval', 'run', 'a.eval.yaml', '-q'])).code).toBe(1);
    const [base] = bundles();
    // beta is fixed; alpha regresses.
    project.write('a.eval.yaml', evalText({ alpha: 'zzz', beta: 'beta', '[[status:500 times:9]] gamma': 'gamma' }));
    const summaryFile = project.path('step-summary.md');
    project.write('step-summary.md', '# earlier step\n');
    const badBase = await cli(['eval', 'run', 'a.eval.yaml', '--compare', 'no-such-run']);
    expect(badBase.code).toBe(2);
    expect(badBase.stderr).toContain('no results bundle "no-such-run"');

    const run = await cli(['eval', 'run', 'a.eval.yaml', '-q', '--compare', base as string], {
      GITHUB_STEP_SUMMARY: summaryFile,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('REGRESSED: 1 case(s)');
    const md = readFileSync(summaryFile, 'utf8');
    expect(md.startsWith('# earlier step\n\n## ')).toBe(true);
    expect(md).toMatch(/## ❌ Proctor run .*: 1\/3 passed/);
    expect(md).toContain('| model |');
    expect(md).toMatch(/### Regressions \(1\)\n+- a\.eval\.yaml · alpha · p1 · 0 · model: passed → failed/);
    expect(md).toMatch(/### Fixes \(1\)\n+- a\.eval\.yaml · beta · p1 · 0 · model: failed → passed/);
  });
});
