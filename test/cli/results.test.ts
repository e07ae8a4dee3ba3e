import { appendFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';

const evalText = `targets: [{ kind: echo }]
prompts: ["{{ word }}"]
tests:
  - { id: good, vars: { word: apple }, assert: [{ type: equals, value: apple }] }
  - { id: bad, vars: { word: pear }, assert: [{ type: equals, value: plum }] }
`;

describe('results list and show', () => {
  it('lists bundles and shows the latest row per case, tolerating a torn last line', async () => {
    const p = tempProject({ 'a.eval.yaml': evalText });
    expect((await runCli(['eval', 'run', '-o', '.proctor/results/first'], { cwd: p.dir })).code).toBe(1);
    const list = await runCli(['results', 'list'], { cwd: p.dir });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/first\s+2\s+1\s+1\s+0\s+50\.0%/);
    const json = JSON.parse((await runCli(['results', 'list', '--json'], { cwd: p.dir })).stdout) as unknown[];
    expect(json).toEqual([expect.objectContaining({ run_id: 'first', counts: expect.objectContaining({ total: 2 }) })]);

    appendFileSync(p.path('.proctor/results/first/index.jsonl'), '{"schema":"proctor.case/1","key":');
    const show = await runCli(['results', 'show', 'first'], { cwd: p.dir });
    expect(show.code).toBe(0);
    expect(show.stderr).toMatch(/1 line\(s\) of index\.jsonl are not complete rows/);
    expect(show.stdout).toMatch(/good · p1 · echo\s+passed/);
    expect(show.stdout).toMatch(/bad · p1 · echo\s+failed/);
    const failures = await runCli(['results', 'show', '.proctor/results/first/index.jsonl', '--failures'], {
      cwd: p.dir,
    });
    expect(failures.stdout).not.toMatch(/good · p1/);
    const summary = JSON.parse((await runCli(['results', 'show', 'first', '--json'], { cwd: p.dir })).stdout) as {
      counts: { total: number; failed: number };
      skipped_lines: number;
    };
    expect(summary).toMatchObject({ counts: { total: 2, failed: 1 }, skipped_lines: 1 });
    const missing = await runCli(['results', 'show', 'nope'], { cwd: p.dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no results bundle "nope"/);
  });
});
