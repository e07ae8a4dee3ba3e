import { afterEach, describe, expect, it } from 'vitest';
import type { Progress } from '../../src/api/follow.js';
import { runEval } from '../../src/api/run-eval.js';
import { loadProjectConfig } from '../../src/plan/config.js';
import { indexRows, onlyBundle, type TempProject, tempProject } from '../support/project.js';

let p: TempProject | undefined;
afterEach(() => p?.remove());

describe('the end of a local eval run', () => {
  it('is read when the last run ends, not at the next reading: the last result is in the bundle at return', async () => {
    p = tempProject({
      // Cases that take a while: they end after the follower's first reading, while it waits.
      'a.eval.yaml': `targets: [{ kind: echo, delay_ms: 300 }]
prompts: ["{{ n }}"]
tests: [{ vars: { n: 1 } }, { vars: { n: 2 } }, { vars: { n: 3 } }]
`,
    });
    const readings: Progress[] = [];
    const { summary } = await runEval({
      config: loadProjectConfig(p.dir, {}),
      cwd: p.dir,
      paths: [],
      flags: { maxConcurrency: 3, retries: 0 },
      env: {},
      // Were the follower to wait out its interval, the run would not end within the test's timeout.
      followIntervalMs: 3_600_000,
      onProgress: (progress) => readings.push(progress),
      wantsProgress: () => true,
    });
    expect(summary?.counts).toMatchObject({ total: 3, passed: 3 });
    expect(indexRows(onlyBundle(p))).toHaveLength(3);
    // One reading before the runs end and the last one the display is given; between them, a full reading when they
    // all have ended only where one is due (fullReadingDue: not within 20× what the first cost, which a loaded
    // machine can make longer than the cases' 300 ms). Waiting out the hour's interval would time the test out.
    expect([
      [0, 3],
      [0, 3, 3],
    ]).toContainEqual(readings.map((r) => r.done));
  }, 20_000);
});
