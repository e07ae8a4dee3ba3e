// Pooled workspaces (issue: workspaces). A 5,000-file git repository with a setup step:
//   npx tsx bench/workspace.ts [--files 5000] [--cases 100] [--concurrency 4]
// Reports one fresh materialisation (clone, checkout, setup, baseline), one reset after a case's changes, and
// the wall time of `proctor eval run` over N cases whose agent edits the workspace, pooled versus `pool: false`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { captureSlot } from '../src/workspaces/capture.js';
import { materialise } from '../src/workspaces/materialise.js';
import { resetSlot } from '../src/workspaces/reset.js';
import { resolveSpec, workspaceSpecSchema } from '../src/workspaces/spec.js';
import { cli, median } from './support.js';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '5000' },
    cases: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '4' },
  },
});
const files = Number(values.files);
const cases = Number(values.cases);
const concurrency = Number(values.concurrency);
const dir = mkdtempSync(join(tmpdir(), 'proctor-bench-ws-'));

const makeRepo = (): void => {
  const repo = join(dir, 'upstream');
  for (let i = 0; i < files; i++) {
    const sub = join(repo, 'src', `d${i % 50}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${i}.ts`), `export const v${i} = ${i};\n`);
  }
  writeFileSync(join(repo, '.gitignore'), 'dist/\n');
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@b',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@b',
  };
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'init'],
  ])
    execFileSync('git', args, { cwd: repo, env });
};

// The setup step builds something ignored (as `npm ci` or a compile would): it must survive every reset.
const setup = 'mkdir -p dist && ls src | wc -l > dist/build.txt';
// The agent edits a tracked file, deletes one, adds untracked and ignored files.
const agent = `const fs = require('fs'); fs.appendFileSync('src/d0/f0.ts', '// edit\\n'); fs.rmSync('src/d1/f1.ts');
fs.writeFileSync('new-' + Date.now() + '.ts', 'x'); fs.writeFileSync('dist/out.js', 'y'); console.log('done');`;

const timeOnce = async () => {
  const spec = resolveSpec(workspaceSpecSchema().parse({ repos: [{ url: './upstream' }], setup: [setup] }), dir);
  const signal = new AbortController().signal;
  const fresh: number[] = [];
  const reset: number[] = [];
  const capture: number[] = [];
  for (let i = 0; i < 5; i++) {
    const slotDir = join(dir, `slot-${i}`);
    let t = performance.now();
    const slot = await materialise(
      spec,
      { pool: 'bench', id: String(i), dir: slotDir },
      { env: () => ({ PATH: process.env.PATH ?? '' }), signal },
    );
    fresh.push(performance.now() - t);
    execFileSync(process.execPath, ['-e', agent], { cwd: slot.path });
    t = performance.now();
    await captureSlot(slot, [], 1_000_000);
    capture.push(performance.now() - t);
    t = performance.now();
    await resetSlot(slot);
    reset.push(performance.now() - t);
    rmSync(slotDir, { recursive: true, force: true });
  }
  return { fresh: median(fresh), reset: median(reset), capture: median(capture) };
};

const evalRun = (pool: boolean): number => {
  const name = `ws-${pool}.eval.yaml`;
  writeFileSync(join(dir, 'agent.js'), agent);
  writeFileSync(
    join(dir, name),
    `workspace:
  repos: [{ url: ./upstream }]
  setup: ["${setup}"]
  pool: ${pool}
targets: [{ kind: cli, command: "node ${join(dir, 'agent.js')}" }]
prompts: ["edit"]
tests:
${Array.from({ length: cases }, (_, i) => `  - { id: t${i}, assert: [{ type: contains, value: done }] }`).join('\n')}
`,
  );
  const t = performance.now();
  execFileSync(process.execPath, [cli, 'eval', 'run', name, '--max-concurrency', String(concurrency)], {
    cwd: dir,
    stdio: 'ignore',
  });
  return performance.now() - t;
};

try {
  makeRepo();
  const once = await timeOnce();
  const pooled = evalRun(true);
  const unpooled = evalRun(false);
  const ms = (n: number) => `${n.toFixed(0)} ms`;
  console.log(`repository: ${files} files; setup: ${setup}`);
  console.log(`fresh materialisation (clone + checkout + setup + baseline), median of 5: ${ms(once.fresh)}`);
  console.log(
    `reset after a case (git dir restored, read-tree, clean -ffdx), median of 5: ${ms(once.reset)} (${((once.reset / once.fresh) * 100).toFixed(0)} % of fresh; goal ≤ 25 %)`,
  );
  console.log(`diff capture before the reset, median of 5:                            ${ms(once.capture)}`);
  console.log(
    `${cases} cases at concurrency ${concurrency}: pooled ${ms(pooled)}, unpooled ${ms(unpooled)} (${(unpooled / pooled).toFixed(2)}×)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
