import { spawnSync } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import type { Summary } from '../../src/bundle/summary.js';
import { cliPath, runCli, startCli, waitFor } from '../support/cli.js';
import { fakeModelForFile } from '../support/fake-model-for-file.js';
import { type TempProject, tempProject } from '../support/project.js';

const server = fakeModelForFile();

interface TestDef {
  id: string;
  q: string;
  expect?: string;
}

const evalText = (tests: TestDef[], opts: { prompts?: string[]; targets?: string[] } = {}) => `
targets:
${(opts.targets ?? ['model']).map((t) => `  - { label: ${t}, kind: openai, base_url: "${server.url}", model: ${t}, api_key: k }`).join('\n')}
prompts: ${JSON.stringify(opts.prompts ?? ['{{ q }}'])}
tests:
${tests.map((t) => `  - { id: ${t.id}, vars: { q: "${t.q}" }, assert: [{ type: contains, value: "${t.expect ?? 'echo'}" }] }`).join('\n')}
`;

const onlyBundle = (p: TempProject): string => {
  const dir = p.path('.proctor/results');
  const [id] = readdirSync(dir);
  return join(dir, id as string);
};

const latest = (bundle: string) => {
  const map = new Map<string, { outcome: string; test: string; eval: string; prompt: string }>();
  for (const r of readIndex(bundle).rows) map.set(r.key, { outcome: r.outcome, ...r.identity });
  return map;
};

const summaryOf = (bundle: string): Summary =>
  JSON.parse(readFileSync(join(bundle, 'summary.json'), 'utf8')) as Summary;

const run = (p: TempProject, ...args: string[]) => runCli(['eval', 'run', '--retries', '0', ...args], { cwd: p.dir });

describe('--rerun-failed', () => {
  it('runs exactly the latest failed or errored cases, never a case the old run did not have', async () => {
    const p = tempProject({
      'a.eval.yaml': evalText([
        { id: 'pass', q: 'pass-1' },
        { id: 'fail', q: 'fail-1', expect: 'nope' },
        { id: 'flaky', q: 'flaky-1 [[status:500 times:1]]' },
      ]),
    });
    expect((await run(p)).code).toBe(1);
    const bundle = onlyBundle(p);
    // A new test and a new target appear after the first run: rerun-failed must not run them.
    p.write(
      'a.eval.yaml',
      evalText(
        [
          { id: 'pass', q: 'pass-1' },
          { id: 'fail', q: 'fail-1', expect: 'nope' },
          { id: 'flaky', q: 'flaky-1 [[status:500 times:1]]' },
          { id: 'new', q: 'new-1' },
        ],
        { targets: ['model', 'other'] },
      ),
    );
    const seen = server.requests.length;
    const rerun = await run(p, '--rerun-failed', bundle, '--allow-drift');
    expect(rerun.stderr).toContain('Rerun-failed: found 3 existing result(s), skipping 1 completed.');
    expect(rerun.stderr).toContain('Rerun-failed: running 2 case(s)');
    expect(
      server.requests
        .slice(seen)
        .map((r) => r.prompt)
        .sort(),
    ).toEqual(['fail-1', 'flaky-1 [[status:500 times:1]]']);
    expect(server.countFor('new-1')).toBe(0);
    // Appended to the same bundle; the summary counts the latest row per key.
    expect(readIndex(bundle).rows).toHaveLength(5);
    const summary = summaryOf(bundle);
    expect(summary.counts).toMatchObject({ total: 3, passed: 2, failed: 1, error: 0 });
    expect(summary.mixed).toBe(true);
    expect(rerun.code).toBe(1);
    // The second execution of a key gets its own artifact folder.
    const attempts = readIndex(bundle)
      .rows.filter((r) => r.identity.test === 'fail')
      .map((r) => r.artifacts);
    expect(attempts).toEqual([expect.stringMatching(/\/1$/), expect.stringMatching(/\/2$/)]);
  });

  it('a pass in one identity never skips a failure in another: two eval files sharing a test id, two prompts', async () => {
    const p = tempProject({
      'a.eval.yaml': evalText([{ id: 'shared', q: 'from-a' }]),
      'b.eval.yaml': evalText([{ id: 'shared', q: 'from-b', expect: 'nope' }]),
      'c.eval.yaml': evalText([{ id: 'two', q: 'prompted', expect: 'first' }], {
        prompts: ['first {{ q }}', 'second {{ q }}'],
      }),
    });
    expect((await run(p)).code).toBe(1);
    const before = latest(onlyBundle(p));
    expect(
      [...before.values()]
        .filter((r) => r.outcome === 'failed')
        .map((r) => `${r.eval}:${r.prompt}`)
        .sort(),
    ).toEqual(['b.eval.yaml:p1', 'c.eval.yaml:p2']);
    server.reset();
    const rerun = await run(p, '--rerun-failed', onlyBundle(p));
    expect(rerun.stderr).toContain('found 4 existing result(s), skipping 2 completed.');
    expect(server.requests.map((r) => r.prompt).sort()).toEqual(['from-b', 'second prompted']);
  });

  it('reports a failed case the suite no longer has, and writes to a new bundle with --output', async () => {
    const p = tempProject({
      'a.eval.yaml': evalText([
        { id: 'gone', q: 'gone-1', expect: 'nope' },
        { id: 'stays', q: 'stays-1', expect: 'nope' },
      ]),
    });
    await run(p);
    const bundle = onlyBundle(p);
    p.write('a.eval.yaml', evalText([{ id: 'stays', q: 'stays-1', expect: 'nope' }]));
    const rerun = await run(p, '--rerun-failed', join(bundle, 'index.jsonl'), '--output', 'second');
    expect(rerun.stderr).toMatch(/a\.eval\.yaml · gone · p1 · model failed before but is no longer in the suite/);
    expect(readIndex(bundle).rows).toHaveLength(2);
    expect(readIndex(p.path('second')).rows.map((r) => r.identity.test)).toEqual(['stays']);
  });

  it('matches rows that carry no identity by test::target only, and rows with absolute eval paths precisely', async () => {
    const p = tempProject({
      'a.eval.yaml': evalText([
        { id: 'x', q: 'x-1' },
        { id: 'y', q: 'y-1' },
      ]),
    });
    await run(p);
    const bundle = onlyBundle(p);
    const rows = readIndex(bundle).rows;
    const y = rows.find((r) => r.identity.test === 'y');
    // An older row with no identity says x failed; a row with an absolute path says y errored.
    appendFileSync(
      join(bundle, 'index.jsonl'),
      `${JSON.stringify({ key: 'legacy', outcome: 'failed', test: 'x', target: 'model' })}\n`,
    );
    appendFileSync(
      join(bundle, 'index.jsonl'),
      `${JSON.stringify({ ...y, key: 'abs', outcome: 'error', identity: { ...y?.identity, eval: p.path('a.eval.yaml') } })}\n`,
    );
    server.reset();
    const rerun = await run(p, '--rerun-failed', bundle);
    // x has a precise passing row: the legacy coarse row does not override it. y's absolute row matches.
    expect(server.requests.map((r) => r.prompt)).toEqual(['y-1']);
    expect(rerun.stderr).toContain('Rerun-failed: running 1 case(s)');
  });

  it('rejects a selector that names no bundle', async () => {
    const p = tempProject({ 'a.eval.yaml': evalText([{ id: 'x', q: 'x' }]) });
    const result = await run(p, '--rerun-failed', 'no-such-run');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no results bundle "no-such-run"[\s\S]*fix:/);
    expect(p.exists('.proctor')).toBe(false);
  });

  // An index of 8 MB or more is read on a worker thread while the suite loads; node --cpu-prof writes a profile
  // per thread, which shows that one ran.
  it('selects from a large index read on a worker thread, and numbers the next attempt after its rows', async () => {
    const p = tempProject({
      'a.eval.yaml': evalText([
        { id: 'pass', q: 'pass-1' },
        { id: 'fail', q: 'fail-1', expect: 'nope' },
      ]),
    });
    expect((await run(p)).code).toBe(1);
    const bundle = onlyBundle(p);
    const index = join(bundle, 'index.jsonl');
    const rows = readFileSync(index, 'utf8');
    writeFileSync(index, rows.repeat(12_000));
    const profiles = p.path('profiles');
    const planned = spawnSync(
      process.execPath,
      ['--cpu-prof', '--cpu-prof-dir', profiles, cliPath, 'eval', 'run', '--rerun-failed', bundle, '--dry-run'],
      { cwd: p.dir, encoding: 'utf8' },
    );
    expect(planned.stdout.trim(), planned.stderr).toBe('1 of 2 case(s) would run');
    expect(readdirSync(profiles)).toHaveLength(2);
    expect((await run(p, '--rerun-failed', bundle)).code).toBe(1);
    const last = readIndex(bundle).rows.at(-1);
    expect([last?.identity.test, last?.artifacts]).toEqual(['fail', expect.stringMatching(/\/12001$/)]);
  });
});

describe('--resume', () => {
  it('skips final results, runs missing and errored cases, and refuses drift unless --allow-drift', async () => {
    const p = tempProject({
      'a.eval.yaml': evalText([
        { id: 'pass', q: 'r-pass' },
        { id: 'fail', q: 'r-fail', expect: 'nope' },
        { id: 'err', q: 'r-err [[status:500 times:1]]' },
      ]),
    });
    await run(p);
    const bundle = onlyBundle(p);
    const seen = server.requests.length;
    p.write(
      'a.eval.yaml',
      evalText([
        { id: 'pass', q: 'r-pass' },
        { id: 'fail', q: 'r-fail', expect: 'nope' },
        { id: 'err', q: 'r-err [[status:500 times:1]]' },
        { id: 'new', q: 'r-new' },
      ]),
    );
    const resumed = await run(p, '--resume', bundle);
    expect(resumed.stderr).toContain('Resume: found 3 existing result(s), skipping 2 completed.');
    expect(
      server.requests
        .slice(seen)
        .map((r) => r.prompt)
        .sort(),
    ).toEqual(['r-err [[status:500 times:1]]', 'r-new']);
    expect(summaryOf(bundle).counts).toMatchObject({ total: 4, passed: 3, failed: 1, error: 0 });

    // Change the grader of a finished case: its old result no longer means what it says.
    p.write('a.eval.yaml', readFileSync(p.path('a.eval.yaml'), 'utf8').replace('value: "nope"', 'value: "other"'));
    const refused = await run(p, '--resume', bundle);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/1 case\(s\) changed[\s\S]*a\.eval\.yaml · fail · p1 · model[\s\S]*--allow-drift/);
    const allowed = await run(p, '--resume', bundle, '--allow-drift');
    // Nothing left to run: nothing failed in this command (see eval-empty-selection.test.ts).
    expect(allowed.stderr).toContain('Resume: running 0 case(s)');
    expect(allowed.code, allowed.stderr).toBe(0);
  });

  it('after kill -9 mid-run, the bundle reads, and --resume finishes it without requesting a passed case twice', async () => {
    const tests = Array.from({ length: 30 }, (_, i) => ({ id: `k${i}`, q: `kill-${i} [[latency:150]]` }));
    const p = tempProject({ 'a.eval.yaml': evalText(tests) });
    const first = startCli(['eval', 'run', '-j', '4', '-o', 'out'], { cwd: p.dir });
    const index = p.path('out/index.jsonl');
    await waitFor(
      () =>
        p.exists('out/index.jsonl') &&
        readFileSync(index, 'utf8').split('\n').length > 4 + Math.floor(Math.random() * 10),
    );
    first.child.kill('SIGKILL');
    await first.done;
    // A torn last line, as a crash mid-write would leave it.
    appendFileSync(index, '{"schema":"proctor.case/1","key":"torn');
    const before = readIndex(p.path('out'));
    expect(before.skipped).toHaveLength(1);
    const passedBefore = before.rows.filter((r) => r.outcome === 'passed');
    expect(passedBefore.length).toBeGreaterThan(3);
    const resumed = await run(p, '--resume', 'out');
    expect(resumed.code, resumed.stderr).toBe(0);
    // The torn tail is cut off (by the resume itself, or by writing the store's committed cases back first).
    expect(readIndex(p.path('out')).skipped).toEqual([]);
    const after = latest(p.path('out'));
    expect(after.size).toBe(30);
    expect([...after.values()].every((r) => r.outcome === 'passed')).toBe(true);
    for (const row of passedBefore) {
      expect(server.countFor(`kill-${row.identity.test.slice(1)} `)).toBe(1);
    }
    expect(summaryOf(p.path('out')).counts).toMatchObject({ total: 30, passed: 30 });
  });
});
