import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundleResult } from '../support/bundle-result.js';
import { runCli } from '../support/cli.js';
import { gitRepo } from '../support/git-repo.js';
import { tempProject } from '../support/project.js';

const agent = fileURLToPath(new URL('./repo-agent.mjs', import.meta.url));

interface Row {
  outcome: string;
  artifacts: string;
  identity: { sample: number };
}

const rowsAndOutputs = (dir: string): { row: Row; output: string }[] => {
  const results = join(dir, '.proctor', 'results');
  const bundle = join(results, readdirSync(results)[0] as string);
  return readFileSync(join(bundle, 'index.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row)
    .map((row) => ({
      row,
      output: bundleResult<{ output: string }>(bundle, row).output,
    }));
};

describe('pooled workspace isolation', () => {
  it('gives each case the baseline repository: no reflog, ref, object, config, hook or info of an earlier case', async () => {
    const p = tempProject();
    gitRepo(p.path('upstream'), { 'src/a.txt': 'a\n', '.gitignore': 'build/\n' });
    const counter = p.path('materialised.log');
    p.write(
      'ws.eval.yaml',
      `workspace:
  repos: [{ url: ./upstream, ref: main, path: app }]
  setup:
    - command: echo x >> ${counter} && mkdir -p app/build && echo setup > app/build/setup.txt
      timeout_s: 30
targets: [{ kind: cli, command: "node ${agent}" }]
prompts: ["solve it"]
tests:
  - { id: only, vars: { name: only }, assert: [{ type: starts-with, value: CLEAN }] }
`,
    );
    // One slot, three samples of one test: each later sample would find the earlier one's solution.
    const r = await runCli(['eval', 'run', 'ws.eval.yaml', '--max-concurrency', '1', '--repeat', '3'], {
      cwd: p.dir,
    });
    const cases = rowsAndOutputs(p.dir);
    const outputs = cases.map((c) => c.output);
    expect(readFileSync(counter, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(
      cases.map((c) => c.row.outcome),
      outputs.map((o) => o.split('\n')[0]).join('\n'),
    ).toEqual(['passed', 'passed', 'passed']);
    expect(r.code).toBe(0);
    // What the first case saw of a fresh materialisation, every later case saw of its reset slot.
    const seen = outputs.map((o) => JSON.parse(o.split('\n')[1] as string) as Record<string, unknown>);
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[2]).toEqual(seen[0]);
    const work = join(p.dir, '.proctor', 'work');
    expect(existsSync(work) ? readdirSync(work) : []).toEqual([]);
    p.remove();
  });
});
