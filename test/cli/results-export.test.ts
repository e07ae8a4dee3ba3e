import { describe, expect, it } from 'vitest';
import { childrenNamed, parseXml } from '../bundle/xml-check.js';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';

// The echo target answers with the prompt, so a hostile word becomes a hostile output.
const evalText = `targets: [{ kind: echo }]
prompts: ["{{ word }}"]
tests:
  - { id: good, vars: { word: apple }, assert: [{ type: equals, value: apple }] }
  - { id: bad, vars: { word: "<script>alert(1)</script> & co" }, assert: [{ type: equals, value: plum }] }
`;

const project = async () => {
  const p = tempProject({ 'a.eval.yaml': evalText });
  expect((await runCli(['eval', 'run', '-q', '-o', '.proctor/results/first'], { cwd: p.dir })).code).toBe(1);
  return p;
};

describe('results export', () => {
  it('jsonl to stdout: the latest row per case, like index.jsonl', async () => {
    const p = await project();
    // A rerun appends rows; the export still has one per case.
    expect((await runCli(['eval', 'run', '-q', '--rerun-failed', 'first'], { cwd: p.dir })).code).toBe(1);
    expect(p.read('.proctor/results/first/index.jsonl').trimEnd().split('\n')).toHaveLength(3);
    const out = await runCli(['results', 'export', 'first', '--format', 'jsonl'], { cwd: p.dir });
    expect(out.code).toBe(0);
    const rows = out.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => (r.identity as { test: string }).test).sort()).toEqual(['bad', 'good']);
    expect(rows[0]).toHaveProperty('duration_ms');
    expect(rows[0]).toHaveProperty('run_id');
  });

  it('junit to a file: grader reasons in the failure, hostile output escaped', async () => {
    const p = await project();
    const out = await runCli(['results', 'export', 'first', '--format', 'junit', '-o', 'reports/junit.xml'], {
      cwd: p.dir,
    });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('');
    const suite = childrenNamed(parseXml(p.read('reports/junit.xml')), 'testsuite')[0]!;
    expect(suite.attrs).toMatchObject({ name: 'echo', tests: '2', failures: '1' });
    const bad = childrenNamed(suite, 'testcase').find((t) => t.attrs.name === 'a.eval.yaml · bad · p1 · 0')!;
    const failure = childrenNamed(bad, 'failure')[0]!;
    expect(failure.attrs.message).toContain('expected output to equal "plum"');
    expect(childrenNamed(bad, 'system-out')[0]?.text).toBe('<script>alert(1)</script> & co');
  });

  it('html: a self-contained page with the hostile output escaped', async () => {
    const p = await project();
    expect(
      (await runCli(['results', 'export', 'first', '--format', 'html', '-o', 'page.html'], { cwd: p.dir })).code,
    ).toBe(0);
    const page = p.read('page.html');
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).not.toContain('<script');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; co');
    expect(page).toMatch(/<td>echo<\/td><td>2<\/td><td>1<\/td><td>1<\/td>/);
  });

  it('exits 2 on an unknown format, a missing --format or a missing bundle', async () => {
    const p = await project();
    const bad = await runCli(['results', 'export', 'first', '--format', 'xml'], { cwd: p.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Allowed choices are json, jsonl, junit, html, csv, markdown/);
    expect((await runCli(['results', 'export', 'first'], { cwd: p.dir })).code).toBe(2);
    const missing = await runCli(['results', 'export', 'nope', '--format', 'jsonl'], { cwd: p.dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/fix: /);
    expect((await runCli(['results', 'export', 'first', '--format', 'jsonl', '-o', '.'], { cwd: p.dir })).code).toBe(2);
  });
});
