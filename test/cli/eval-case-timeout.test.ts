import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import type { Summary } from '../../src/bundle/summary.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { runCli, startCli, waitFor } from '../support/cli.js';
import { onlyBundle, type TempProject, tempProject } from '../support/project.js';

// Every CLI here is killed well before the test's own limit: a hang fails an assertion instead of hanging vitest.
const cliLimitMs = 25_000;

const rowsByTest = (project: TempProject) =>
  new Map(readIndex(onlyBundle(project)).rows.map((r) => [r.identity.test, r] as const));

/** Runs the project's eval with a 2 s case timeout; it must end by itself, with a case not passed. */
const runTimed = async (project: TempProject) => {
  const result = await runCli(['eval', 'run', '--timeout', '2', '-j', '3'], {
    cwd: project.dir,
    timeoutMs: cliLimitMs,
  });
  expect(result.signal, result.stderr).toBeNull();
  expect(result.code, result.stderr).toBe(1);
  return rowsByTest(project);
};

/** Runs of the project's store that never reached a terminal status. */
const unfinishedRuns = async (dir: string): Promise<string[]> => {
  const store = await openSqliteStore(join(dir, '.proctor', 'proctor.db'));
  try {
    const runs = await store.listRuns({ statuses: ['QUEUED', 'RUNNING'] });
    return runs.map((r) => `${r.runId} ${r.status}`);
  } finally {
    await store.close();
  }
};

// Writes a marker beside itself, so a test knows grading has started, then never returns.
const loopingModule = `import { writeFileSync } from 'node:fs';
export default () => {
  writeFileSync(new URL('./grading.txt', import.meta.url), 'x');
  while (true) {}
};
`;

describe('a case is bounded by its timeout_s, grading included', () => {
  it('a javascript grader that never returns (inline or file://) ends its case error/grader_error; the others pass', async () => {
    const project = tempProject({
      'loop.mjs': loopingModule,
      'a.eval.yaml': `targets: [{ kind: echo }]
prompts: ["{{ q }}"]
tests:
  - id: inline-loop
    vars: { q: a }
    assert: [{ type: javascript, value: "while (true) {}" }]
  - id: file-loop
    vars: { q: b }
    assert: [{ type: javascript, value: "file://loop.mjs" }]
  - id: fine
    vars: { q: c }
    assert: [{ type: javascript, value: "output === 'c'" }]
`,
    });
    const rows = await runTimed(project);
    for (const id of ['inline-loop', 'file-loop']) {
      expect(rows.get(id), id).toMatchObject({ outcome: 'error', error: { kind: 'grader_error', retryable: false } });
    }
    expect(rows.get('fine')).toMatchObject({ outcome: 'passed', error: null });
    expect(await unfinishedRuns(project.dir)).toEqual([]);
  });

  it('bounds a slow `after` step and a slow script grader by timeout_s', async () => {
    const project = tempProject({
      'a.eval.yaml': `targets: [{ kind: echo }]
prompts: ["{{ q }}"]
tests:
  - id: slow-after
    vars: { q: a }
    assert: [{ type: contains, value: a }]
    after: [{ id: linger, type: exec, command: "sleep 60" }]
  - id: slow-script
    vars: { q: b }
    assert: [{ type: script, value: "sleep 60" }]
  - id: fine
    vars: { q: c }
    assert: [{ type: contains, value: c }]
`,
    });
    const rows = await runTimed(project);
    expect(rows.get('slow-after')).toMatchObject({ outcome: 'error', error: { kind: 'timeout' } });
    expect(rows.get('slow-script')).toMatchObject({ outcome: 'error', error: { kind: 'grader_error' } });
    expect(rows.get('fine')).toMatchObject({ outcome: 'passed' });
  });

  it('SIGINT while a javascript grader loops exits 130 with a valid bundle and no run left RUNNING', async () => {
    const project = tempProject({
      'loop.mjs': loopingModule,
      'a.eval.yaml': `targets: [{ kind: echo }]
prompts: [go]
tests: [{ id: loops, assert: [{ type: javascript, value: "file://loop.mjs" }] }]
`,
    });
    const cli = startCli(['eval', 'run'], { cwd: project.dir, timeoutMs: cliLimitMs });
    await waitFor(() => project.exists('grading.txt'));
    cli.child.kill('SIGINT');
    const result = await cli.done;
    expect(result.signal, result.stderr).toBeNull();
    expect(result.code, result.stderr).toBe(130);
    const bundle = onlyBundle(project);
    const summary = JSON.parse(readFileSync(join(bundle, 'summary.json'), 'utf8')) as Summary;
    expect(summary.counts).toMatchObject({ total: 1, canceled: 1 });
    expect(rowsByTest(project).get('loops')).toMatchObject({ outcome: 'canceled' });
    expect(existsSync(join(bundle, 'index.jsonl'))).toBe(true);
    expect(await unfinishedRuns(project.dir)).toEqual([]);
  });
});
