import { describe, expect, it } from 'vitest';
import { readResultText } from '../../src/bundle/case-files.js';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';

interface Row {
  key: string;
  artifacts: string;
}

describe('eval run -o into a bundle that already holds rows', () => {
  it('numbers its attempts on from the rows there, so no earlier attempt is overwritten', async () => {
    const p = tempProject({
      'a.eval.yaml': `targets: [{ kind: echo }]
prompts: ["{{ w }}"]
tests:
  - { id: a, vars: { w: apple }, assert: [{ type: equals, value: apple }] }
  - { id: b, vars: { w: pear }, assert: [{ type: equals, value: pear }] }
`,
    });
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['eval', 'run', '-q', '-o', 'out', 'a.eval.yaml'], { cwd: p.dir });
      expect(r.code, r.stderr).toBe(0);
    }
    const rows = p
      .read('out/index.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    expect(rows).toHaveLength(4);
    // Each row keeps its own artifacts: the first run's result is still the first run's.
    expect(new Set(rows.map((r) => r.artifacts)).size).toBe(4);
    for (const row of rows) expect(readResultText(p.path('out'), row), row.artifacts).toBeDefined();
    p.remove();
  });
});
