// What the end of `eval run` writes and prints — summary.json, every --export format, the job summary, the
// failure list, the gate and the comparison — over a bundle with passes, failures, errors, cancellations,
// repeats, drift, a budget that ran out and a line that is not a row. The snapshots under bundle/snapshots/end-of-run
// were written by the build before the end of a run read its index once (one reader per output): these outputs
// must stay byte for byte what they were.
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { toIndexRow } from '../../src/bundle/row.js';
import { type Summary, writeSummary } from '../../src/bundle/summary.js';
import { BundleWriter } from '../../src/bundle/writer.js';
import type { ErrorRecord } from '../../src/errors.js';
import { caseKey } from '../../src/plan/identity.js';
import type { Outcome, Usage } from '../../src/records.js';
import { runCli } from '../support/cli.js';
import { type TempProject, tempProject } from '../support/project.js';

interface Row {
  test: string;
  outcome: Outcome;
  target?: string;
  sample?: number;
  fingerprint?: string;
  /** The failing grader's reason, written to the case's result.json. */
  reason?: string;
  error?: ErrorRecord;
  usage?: Usage;
  judgeUsage?: Usage;
}

const t0 = Date.parse('2025-01-01T00:00:00.000Z');
const priced = (cost: number | null): Usage => ({ inputTokens: 10, outputTokens: 5, costUsd: cost });

/** Writes `rows` in order as a bundle of run `runId`; `tornAfter` puts a line that is not a row after that row. */
const writeBundle = (dir: string, runId: string, rows: readonly Row[], tornAfter?: number): void => {
  const writer = new BundleWriter(dir);
  rows.forEach((r, i) => {
    const identity = {
      eval: 'a.eval.yaml',
      test: r.test,
      prompt: 'p1',
      target: r.target ?? 'echo',
      sample: r.sample ?? 0,
    };
    const key = caseKey(identity);
    const artifacts = `cases/${key}/${i + 1}`;
    const row = JSON.stringify(
      toIndexRow({
        identity,
        key,
        fingerprint: r.fingerprint ?? 'f1',
        outcome: r.outcome,
        score: r.outcome === 'passed' ? 1 : r.outcome === 'failed' ? 0.25 : null,
        error: r.error ?? null,
        attempts: r.error ? 2 : 1,
        durationMs: 7 + ((i * 37) % 90),
        usage: r.usage ?? priced(0.001),
        ...(r.judgeUsage ? { judgeUsage: r.judgeUsage } : {}),
        runId,
        groupId: `${runId}-g${i % 2}`,
        startedAt: t0 + i * 1000,
        finishedAt: t0 + i * 1000 + 7,
        artifacts,
      }),
    );
    if (r.reason === undefined) writer.appendLines([row]);
    else {
      // As a run writes it: a case whose only file is its result.json is packed, its row after it.
      const verify = { results: [{ id: 'equals', pass: false, score: 0, reason: r.reason }] };
      const result = JSON.stringify({ output: `out ${r.test}`, steps: [{ stepId: 'verify', output: verify }] });
      writer.writeCase(key, i + 1, { 'result.json': result }, row);
      writer.flush();
    }
    if (i === tornAfter) appendFileSync(`${dir}/index.jsonl`, '{"schema":"proctor.case/1","key":"torn\n');
  });
  writer.close();
};

const timeout: ErrorRecord = { kind: 'timeout', message: 'no answer <in> 5s', retryable: true };
const budget: ErrorRecord = { kind: 'budget_exceeded', message: 'the budget ran out', retryable: false };

const many = (n: number, outcome: Outcome): Row[] =>
  Array.from({ length: n }, (_, i) => ({ test: `many-${String(i).padStart(2, '0')}`, outcome, reason: `wrong ${i}` }));

const head: Row[] = [
  // The eval file's one case: finished, so --resume selects nothing (its fingerprint is the fixture's).
  { test: 'only', outcome: 'passed' },
  { test: 'good', outcome: 'passed' },
  { test: 'good', outcome: 'passed', target: 'other', usage: priced(null) },
  { test: 'bad', outcome: 'failed', reason: 'expected "plum", got <script>alert("x")</script> & \'quotes\' ]]>' },
  { test: 'boom', outcome: 'error', error: timeout },
  { test: 'stop', outcome: 'canceled', target: 'other' },
  { test: 'flaky', outcome: 'passed', sample: 0 },
  { test: 'flaky', outcome: 'failed', sample: 1, reason: 'said no' },
  { test: 'flaky', outcome: 'passed', sample: 2 },
  { test: 'moved', outcome: 'failed', reason: 'old prompt' },
  { test: 'judged', outcome: 'passed', judgeUsage: priced(0.02) },
  { test: 'moved', outcome: 'passed', fingerprint: 'f2' },
  { test: 'unstarted', outcome: 'error', error: budget, usage: priced(0) },
  ...many(55, 'failed'),
  { test: 'boom', outcome: 'error', error: timeout },
];

const base: Row[] = [
  { test: 'good', outcome: 'passed' },
  { test: 'bad', outcome: 'passed' },
  { test: 'boom', outcome: 'failed', reason: 'was failing' },
  { test: 'moved', outcome: 'failed', reason: 'old prompt' },
  { test: 'gone', outcome: 'passed' },
  { test: 'judged', outcome: 'passed' },
  ...many(30, 'passed'),
];

const exportNames = ['r.json', 'r.jsonl', 'r.csv', 'r.xml', 'r.html', 'r.md'];

describe('the end of a run', () => {
  let project: TempProject;
  afterEach(() => project.remove());

  // The clock of the command and where the project lives are all that may differ.
  const normal = (text: string): string =>
    text.replaceAll(project.dir, '{project}').replace(/20(?!25)\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '{now}');
  const read = (path: string): string => normal(readFileSync(project.path(path), 'utf8'));
  const exportFlags = exportNames.flatMap((file) => ['--export', `out/${file}`]);

  /** `eval run` resuming the head bundle with nothing selected, comparing with the base; outputs normalised. */
  const endOfRun = async (headRows: readonly Row[], flags: string[], tmp?: string) => {
    project = tempProject({
      // Its one case is finished in the head bundle: the command runs nothing and reports that bundle as it is.
      'a.eval.yaml': 'targets: [{ kind: echo }]\nprompts: ["{{ w }}"]\ntests:\n  - { id: only, vars: { w: x } }\n',
    });
    writeBundle(project.path('head'), 'head', headRows, 6);
    writeBundle(project.path('base'), 'base', base, 2);
    // The command's temporary folder, where export spools go: the test's own, to see what is left in it.
    const env: Record<string, string> = tmp === undefined ? {} : { TMPDIR: project.path(tmp) };
    if (tmp !== undefined) mkdirSync(project.path(tmp));
    const args = ['eval', 'run', 'a.eval.yaml', '--resume', 'head', '--allow-drift', '--compare', 'base'];
    const run = await runCli([...args, ...flags], {
      cwd: project.dir,
      env: { GITHUB_STEP_SUMMARY: project.path('step-summary.md'), ...env },
    });
    expect(run.code, run.stderr).toBe(0);
    return { stdout: normal(run.stdout), stderr: normal(run.stderr) };
  };

  it('writes summary.json, every export and the job summary, and prints the failures as before', async () => {
    const run = await endOfRun(head, exportFlags);
    const dir = '../bundle/snapshots/end-of-run';
    await expect(run.stdout).toMatchFileSnapshot(`${dir}/stdout.txt`);
    await expect(run.stderr).toMatchFileSnapshot(`${dir}/stderr.txt`);
    await expect(read('head/summary.json')).toMatchFileSnapshot(`${dir}/summary.json`);
    await expect(read('step-summary.md')).toMatchFileSnapshot(`${dir}/step-summary.md`);
    for (const file of exportNames) await expect(read(`out/${file}`)).toMatchFileSnapshot(`${dir}/${file}`);
  });

  it('judges repeated cases by --pass-rule and the rate by --fail-under as before', async () => {
    const run = await endOfRun(head, ['--pass-rule', '0.5', '--fail-under', '0.3']);
    await expect(run.stdout).toMatchFileSnapshot('../bundle/snapshots/end-of-run/gated-stdout.txt');
  });

  it('spools the exports of a large bundle on disk, removes the spools, and writes what `results export` does', async () => {
    // Some megabytes of rows: every export's spool passes the size it keeps in memory.
    const rows = [...head, ...many(3_000, 'failed').map((r) => ({ ...r, test: `big-${r.test}` }))];
    const spools = 'tmp';
    const run = await endOfRun(rows, exportFlags, spools);
    expect(run.stdout).toContain('failures (3059)');
    expect(readdirSync(project.path(spools))).toEqual([]);
    for (const file of exportNames) {
      const format = { xml: 'junit', md: 'markdown' }[file.slice(2)] ?? file.slice(2);
      const alone = await runCli(['results', 'export', 'head', '--format', format, '-o', `alone/${file}`], {
        cwd: project.dir,
      });
      expect(alone.code, alone.stderr).toBe(0);
      expect(read(`out/${file}`), file).toBe(read(`alone/${file}`));
    }
  });

  it('writes the summary a pass over the bundle makes: new, resumed with new cases, and its failures rerun', async () => {
    const suite = (ids: string[]): string =>
      `targets: [{ kind: echo }, { kind: echo, label: other }]\nprompts: ["{{ w }}"]\ntests:\n${ids
        .map((id) => `  - { id: ${id}, vars: { w: ${id} }, assert: [{ type: contains, value: "1" }] }\n`)
        .join('')}`;
    project = tempProject({ 'a.eval.yaml': suite(['a1', 'b', 'c1', 'd']) });
    const withoutClock = (summary: Summary | undefined) => ({ ...summary, updated_at: '' });
    const written = (): Summary => JSON.parse(readFileSync(project.path('out/summary.json'), 'utf8')) as Summary;
    const first = await runCli(['eval', 'run', '-q', '-o', 'out'], { cwd: project.dir });
    expect(first.code, first.stderr).toBe(1);
    expect(withoutClock(written())).toEqual(withoutClock(writeSummary(project.path('out'), written().run_id)));
    project.write('a.eval.yaml', suite(['a1', 'b', 'c1', 'd', 'e1', 'f']));
    const more = await runCli(['eval', 'run', '-q', '--resume', 'out'], { cwd: project.dir });
    expect(more.code, more.stderr).toBe(1);
    expect(written().counts).toMatchObject({ total: 12, passed: 6, failed: 6 });
    expect(withoutClock(written())).toEqual(withoutClock(writeSummary(project.path('out'), written().run_id)));
    // Rows that supersede the failures the bundle held: summarised by a pass at the end.
    const rerun = await runCli(['eval', 'run', '-q', '--rerun-failed', 'out'], { cwd: project.dir });
    expect(rerun.code, rerun.stderr).toBe(1);
    expect(written().counts).toMatchObject({ total: 12, passed: 6, failed: 6 });
    expect(withoutClock(written())).toEqual(withoutClock(writeSummary(project.path('out'), written().run_id)));
  });
});
