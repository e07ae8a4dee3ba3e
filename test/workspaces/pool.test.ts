import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { gitRepo } from '../support/git-repo.js';
import { tempProject } from '../support/project.js';

const agent = fileURLToPath(new URL('./agent.mjs', import.meta.url));

interface Row {
  key: string;
  outcome: string;
  attempts: number;
  artifacts: string;
  identity: { test: string };
  error: { kind: string; message: string } | null;
}

const rows = (dir: string): Row[] => {
  const results = join(dir, '.proctor', 'results');
  const [bundle] = readdirSync(results);
  return readFileSync(join(results, bundle as string, 'index.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);
};

const bundleFile = (dir: string, row: Row, name: string): string => {
  const results = join(dir, '.proctor', 'results');
  const [bundle] = readdirSync(results);
  return readFileSync(join(results, bundle as string, row.artifacts, name), 'utf8');
};

const outputOf = (dir: string, row: Row): string =>
  (JSON.parse(bundleFile(dir, row, 'result.json')) as { output: string }).output;

const lines = (file: string): number =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;

const leftovers = (dir: string): string[] => {
  const work = join(dir, '.proctor', 'work');
  return existsSync(work) ? readdirSync(work) : [];
};

/** A project whose eval runs `agent.mjs` in a workspace: a repo at `app/`, template files at the root. */
const project = (
  tests: { name: string; break?: boolean }[],
  setup = 'mkdir -p app/build && echo setup > app/build/setup.txt',
) => {
  const p = tempProject({
    'template/notes.md': 'notes\n',
    'template/keep.md': 'keep\n',
    'template/.gitignore': '*.log\n',
  });
  gitRepo(p.path('upstream'), { 'src/a.txt': 'a\n', 'src/b.txt': 'b\n', '.gitignore': 'build/\n' });
  const counter = p.path('materialised.log');
  p.write(
    'ws.eval.yaml',
    `workspace:
  template: template
  repos: [{ url: ./upstream, ref: main, path: app }]
  setup:
    - command: echo x >> ${counter} && ${setup}
      timeout_s: 30
  files: [notes.md]
targets: [{ kind: cli, command: "node ${agent}" }]
prompts: ["change things"]
default_test:
  assert: [{ type: starts-with, value: CLEAN }]
tests:
${tests.map((t) => `  - { id: ${t.name}, vars: { name: ${t.name}, break: ${t.break === true} } }`).join('\n')}
`,
  );
  return { p, counter };
};

describe('pooled workspaces', () => {
  it('runs ten cases on two slots, each from a clean baseline', async () => {
    const names = Array.from({ length: 10 }, (_, i) => ({ name: `c${i + 1}` }));
    const { p, counter } = project(names);
    const r = await runCli(['eval', 'run', 'ws.eval.yaml', '--max-concurrency', '2'], { cwd: p.dir });
    const all = rows(p.dir);
    const outputs = all.map((row) => outputOf(p.dir, row));
    expect(r.code, `${outputs.join('\n')}\n${JSON.stringify(all.map((row) => row.error?.message.slice(0, 300)))}`).toBe(
      0,
    );
    expect(all.map((row) => row.outcome)).toEqual(Array(10).fill('passed'));
    expect(lines(counter)).toBe(2);
    expect(new Set(outputs.map((o) => o.split(' ')[1])).size).toBe(2);
    // The diff against the baseline was saved before the reset: new, changed and deleted files of both trees.
    const diff = bundleFile(p.dir, all[0] as Row, 'workspace.diff');
    expect(diff).toContain('+++ b/app/trace-');
    expect(diff).toContain('--- a/app/src/b.txt');
    expect(diff).toContain('--- a/keep.md');
    expect(JSON.parse(bundleFile(p.dir, all[0] as Row, 'workspace.files.json')).files['notes.md']).not.toBe('notes\n');
    // A case with files besides its result keeps its folder, its result.json in it, and no place in the pack.
    expect(outputOf(p.dir, all[0] as Row)).toMatch(/^CLEAN/);
    expect(all.some((row) => 'result_at' in row)).toBe(false);
    expect(leftovers(p.dir)).toEqual([]);
    p.remove();
  });

  it('discards a slot whose reset fails and materialises a new one', async () => {
    const { p, counter } = project([{ name: 'one' }, { name: 'two', break: true }, { name: 'three' }]);
    const r = await runCli(['eval', 'run', 'ws.eval.yaml', '--max-concurrency', '1'], { cwd: p.dir });
    const all = rows(p.dir);
    expect(r.code, all.map((row) => outputOf(p.dir, row)).join('\n')).toBe(0);
    expect(lines(counter)).toBe(2);
    const [one, , three] = all.map((row) => outputOf(p.dir, row).split(' ')[1]);
    expect(three).not.toBe(one);
    expect(leftovers(p.dir)).toEqual([]);
    p.remove();
  });

  it('retries a failing setup as infrastructure, then reports setup_failed', async () => {
    const { p, counter } = project([{ name: 'only' }], 'echo broken >&2; exit 3');
    const r = await runCli(['eval', 'run', 'ws.eval.yaml', '--retries', '1'], { cwd: p.dir });
    expect(r.code).toBe(1);
    const [row] = rows(p.dir);
    expect(row?.outcome).toBe('error');
    expect(row?.error?.kind).toBe('setup_failed');
    expect(row?.error?.message).toContain('broken');
    expect(row?.attempts).toBe(2);
    expect(lines(counter)).toBe(2);
    expect(leftovers(p.dir)).toEqual([]);
    p.remove();
  });
});
