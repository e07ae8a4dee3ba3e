import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadProjectConfig } from '../../src/plan/config.js';
import { openStore } from '../../src/store/open.js';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';

// Files the cases name: a workspace template, a CLI agent run from its own `cwd:`, a `file://` javascript grader,
// and a `before` step, all relative to the eval's folder (a sub-folder of the project).
const files = {
  'evals/fixture/seed.txt': 'seeded\n',
  'evals/agent/answer.sh': 'cat > /dev/null; cat ../fixture/seed.txt\n',
  'evals/check.mjs': "export default (output) => output.includes('seeded');\n",
  'evals/a.eval.yaml': `workspace: { template: fixture }
targets: [{ kind: cli, command: "sh answer.sh", cwd: agent }]
prompts: ["go"]
default_test:
  before: [{ id: look, type: exec, command: cat seed.txt }]
tests:
  - id: one
    assert:
      - { type: javascript, value: "file://check.mjs" }
      - { type: contains, value: seeded }
`,
  't.task.yaml': `id: t
steps:
  - { id: read, type: exec, command: cat evals/fixture/seed.txt }
  - { id: ask, type: prompt, target: { kind: echo }, prompt: "hi" }
`,
  'proctor.toml': '',
  'sub/.keep': '',
};

describe('stored specs name files relative to the project root', () => {
  it('an eval run from a sub-folder stores no absolute path of this machine, and its cases find every file', async () => {
    const p = tempProject(files);
    try {
      const run = await runCli(['eval', 'run', '../evals', '-o', '../out'], { cwd: p.path('sub') });
      expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
      const task = await runCli(['task', 'run', '../t.task.yaml'], { cwd: p.path('sub') });
      expect(task.code, `${task.stdout}${task.stderr}`).toBe(0);
      expect(task.stdout).toContain('seeded');

      const root = realpathSync(p.dir);
      const store = await openStore(loadProjectConfig(p.dir, {}).store);
      try {
        const runs = await store.listRuns({});
        expect(runs.length).toBeGreaterThan(0);
        for (const r of runs) {
          const instance = await store.getInstance(r.instanceId);
          for (const stored of [r.metadata, instance?.spec, instance?.context]) {
            const text = JSON.stringify(stored);
            expect(text).not.toContain(root);
            expect(text).not.toContain(p.dir);
          }
        }
        const specs = await Promise.all(
          runs.map(async (r) => JSON.stringify((await store.getInstance(r.instanceId))?.spec)),
        );
        expect(specs.some((s) => s.includes('"baseDir":"evals"'))).toBe(true);
      } finally {
        await store.close();
      }
    } finally {
      p.remove();
    }
  });
});
