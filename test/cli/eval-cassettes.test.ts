// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` references are written into configs under test.
// Hermetic CI: record every model call into cassettes/, stop the model, replay the run with no network.
import { readdirSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import { bundleResult } from '../support/bundle-result.js';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { filesContaining } from '../support/files.js';
import { type TempProject, tempProject } from '../support/project.js';

const key = 'sk-cassette-secret-1234567890';

const evalText = (url: string, last = 'three') => `
targets:
  - { label: model, kind: openai, base_url: "${url}", model: m, api_key: "\${MODEL_KEY}" }
prompts: ["Say {{ word }}"]
tests:
${['one', 'two', last].map((w, i) => `  - { id: t${i}, vars: { word: "${w}" }, assert: [{ type: contains, value: "${w}" }] }`).join('\n')}
`;

describe('cassettes', () => {
  let project: TempProject;
  let fake: FakeModelServer | undefined;
  const run = (args: string[], env: Record<string, string> = {}) =>
    runCli(['eval', 'run', 'a.eval.yaml', '-q', ...args], { cwd: project.dir, env: { MODEL_KEY: key, ...env } });
  const rows = (out: string) =>
    readIndex(project.path(out))
      .rows.map((r) => [
        r.identity.test,
        r.identity.sample,
        r.key,
        r.fingerprint,
        r.outcome,
        r.score,
        r.error?.kind ?? null,
      ])
      .sort();

  beforeEach(async () => {
    fake = await startFakeModelServer();
    project = tempProject({ 'a.eval.yaml': evalText(fake.url) });
  });
  afterEach(async () => {
    await fake?.close();
    project.remove();
  });

  it('records each sample apart, then replays the run with the model gone: same rows, no call, no secret', async () => {
    const recorded = await run(['--cassette', 'record', '--repeat', '2', '-o', 'rec']);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(fake?.requests).toHaveLength(6);
    const files = readdirSync(project.path('cassettes/a.eval.yaml'));
    expect(files).toHaveLength(6);
    expect(await filesContaining(project.dir, key)).toEqual([]);
    await fake?.close();
    fake = undefined;

    for (const j of ['1', '32']) {
      const replayed = await run(['--cassette', 'replay', '--repeat', '2', '-j', j, '-o', `play-${j}`]);
      expect(replayed.code, replayed.stderr + replayed.stdout).toBe(0);
      expect(rows(`play-${j}`)).toEqual(rows('rec'));
    }
    const [first] = readIndex(project.path('play-1')).rows;
    const result = bundleResult<{
      steps: { stepId: string; output: { replayed: boolean; usage: { costUsd: number } } }[];
    }>(project.path('play-1'), first ?? {});
    const prompt = result.steps.find((s) => s.stepId === 'prompt');
    expect(prompt?.output.replayed).toBe(true);
    expect(prompt?.output.usage.costUsd).toBe(0);
  });

  it('a changed prompt misses exactly its case in a strict replay, naming what differs; CI replays by default', async () => {
    expect((await run(['--cassette', 'record'])).code).toBe(0);
    await fake?.close();
    fake = undefined;
    project.write('a.eval.yaml', evalText('http://127.0.0.1:9/v1', 'four'));
    const replayed = await run(['--cassette', 'replay', '-o', 'changed']);
    expect(replayed.code).toBe(1);
    const byTest = new Map(readIndex(project.path('changed')).rows.map((r) => [r.identity.test, r]));
    expect(byTest.get('t0')?.outcome).toBe('passed');
    expect(byTest.get('t1')?.outcome).toBe('passed');
    expect(byTest.get('t2')?.error?.kind).toBe('cassette_miss');
    expect(byTest.get('t2')?.error?.retryable).toBe(false);
    expect(byTest.get('t2')?.error?.message).toContain(
      `no recorded reply in cassettes/a.eval.yaml/${byTest.get('t2')?.key}.jsonl`,
    );
    expect(byTest.get('t2')?.error?.message).toContain('input.prompt: recorded "Say three", now "Say four"');

    project.write('a.eval.yaml', evalText('http://127.0.0.1:9/v1'));
    const ci = await run(['-o', 'ci'], { CI: 'true' });
    expect(ci.code, ci.stderr + ci.stdout).toBe(0);
  });

  it('records and replays a judge’s calls too', async () => {
    const judge = await startFakeModelServer({
      respond: (prompt) =>
        prompt.includes('polite') ? { toolInput: { reason: 'ok', pass: true, score: 1 } } : undefined,
    });
    try {
      const judged = (url: string) => `
targets: [{ kind: echo }]
judges:
  grader: { kind: openai, base_url: "${url}", model: judge-model, api_key: "\${MODEL_KEY}" }
prompts: ["Say {{ word }}"]
tests:
  - { id: t0, vars: { word: hi }, assert: [{ type: llm-rubric, value: is polite, judge: grader }] }
`;
      project.write('j.eval.yaml', judged(judge.url));
      const cli = (args: string[]) =>
        runCli(['eval', 'run', 'j.eval.yaml', '-q', ...args], { cwd: project.dir, env: { MODEL_KEY: key } });
      expect((await cli(['--cassette', 'record', '-o', 'jrec'])).code).toBe(0);
      expect(judge.requests).toHaveLength(1);
      await judge.close();
      const replayed = await cli(['--cassette', 'replay', '-o', 'jplay']);
      expect(replayed.code, replayed.stderr + replayed.stdout).toBe(0);
      expect(rows('jplay')).toEqual(rows('jrec'));
    } finally {
      // Closed already when the test got that far.
      await judge.close().catch(() => {});
    }
  });

  it('refuses to replay a command target, and an unknown mode', async () => {
    project.write('b.eval.yaml', 'targets: [{ kind: cli, command: [cat] }]\nprompts: [hi]\n');
    const command = await runCli(['eval', 'run', 'b.eval.yaml', '--cassette', 'replay'], { cwd: project.dir });
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('runs a command, which a cassette cannot replay');
    const mode = await run(['--cassette', 'sometimes']);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain('--cassette "sometimes" is not a cassette mode');
  });
});
