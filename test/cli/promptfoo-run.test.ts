import { cpSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { type FakeAnthropicServer, startFakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { type FakeHttpServer, startFakeHttpServer } from '../support/fake-http-server.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { filesContaining } from '../support/files.js';
import { indexRows, onlyBundle, type TempProject, tempProject } from '../support/project.js';

const fixtures = fileURLToPath(new URL('../fixtures/promptfoo/', import.meta.url));

interface Row {
  identity: { eval: string; test: string; prompt: string; target: string; sample: number };
  outcome: string;
  score: number;
  fingerprint: string;
}

const rowsOf = (bundle: string): Row[] => indexRows<Row>(bundle);

/** A row without the eval path (which an import renames), keyed by the rest of its identity. */
const byCase = (rows: readonly Row[]): Map<string, [string, number, string]> =>
  new Map(
    rows.map((r) => {
      const { test, prompt, target, sample } = r.identity;
      return [`${test} ${prompt} ${target} ${sample}`, [r.outcome, r.score, r.fingerprint]];
    }),
  );

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(() => fake.close());

const env = () => ({ OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test-not-a-secret' });

describe('a promptfoo config runs unchanged', () => {
  let project: TempProject;
  beforeAll(() => {
    project = tempProject();
    cpSync(path.join(fixtures, 'basic'), project.dir, { recursive: true });
  });
  afterAll(() => project.remove());

  it('runs every key of the basic fixture, then imports into a native eval that plans and grades the same', async () => {
    const run = await runCli(['eval', 'run', 'promptfooconfig.yaml', '-q', '-j', '8', '-o', '.proctor/results/pf'], {
      cwd: project.dir,
      env: env(),
    });
    // Only the one warning a model without a [pricing] entry gets: its cost is unknown, never guessed.
    expect(run.stderr).toMatch(/^(warning: no price for [^\n]+\n)*$/);
    expect(run.code).toBe(0);
    const rows = rowsOf(project.path('.proctor/results/pf'));
    // 7 tests (an array var ×2, a glob var ×2, 2 CSV rows, 1 YAML file) × 3 prompts (a .txt of two, a chat
    // JSON) × 5 targets, every one passing.
    expect(rows).toHaveLength(105);
    expect(rows.every((r) => r.outcome === 'passed')).toBe(true);
    expect([...new Set(rows.map((r) => r.identity.target))].sort()).toEqual([
      'echo',
      'exec',
      'fake',
      'module-a',
      'module-b',
    ]);
    expect([...new Set(rows.map((r) => r.identity.test))].sort()).toEqual([
      't1-1',
      't1-2',
      't2-1',
      't2-2',
      't3',
      't4',
      't5',
    ]);
    // The chat prompt reached the model as messages: a system message, and the user's text parts joined.
    const chat = fake.requests.find((r) => r.body.messages?.[0]?.role === 'system');
    expect(chat?.body.messages?.[0]?.content).toBe('You answer in one line.');
    expect(chat?.prompt).toMatch(/^Be brief\.\n Topic: (cats|dogs|docs|fish|birds|owls)$/);
    expect(chat?.body).toMatchObject({ model: 'fake-model', temperature: 0, max_tokens: 64 });

    const imported = await runCli(['import', 'promptfoo', 'promptfooconfig.yaml'], { cwd: project.dir });
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/wrote .*promptfooconfig\.eval\.yaml\nwrote .*proctor\.toml/);
    const native = await runCli(
      ['eval', 'run', 'promptfooconfig.eval.yaml', '-q', '-j', '8', '-o', '.proctor/results/native'],
      { cwd: project.dir, env: env() },
    );
    expect(native.code).toBe(0);
    const nativeRows = rowsOf(project.path('.proctor/results/native'));
    expect(nativeRows.every((r) => r.identity.eval === 'promptfooconfig.eval.yaml')).toBe(true);
    expect(byCase(nativeRows)).toEqual(byCase(rows));
    expect(project.read('proctor.toml')).not.toContain('sk-test');
  });

  it('refuses to import over an existing file', async () => {
    const again = await runCli(['import', 'promptfoo', 'promptfooconfig.yaml'], { cwd: project.dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/promptfooconfig\.eval\.yaml already exists/);
  });
});

describe('chat prompts', () => {
  it('render a YAML chat file with a loop, then send it as messages; an array of objects does not expand', async () => {
    const p = tempProject();
    cpSync(path.join(fixtures, 'chat'), p.dir, { recursive: true });
    fake.reset();
    const r = await runCli(['eval', 'run', '-q', 'promptfooconfig.yaml'], { cwd: p.dir, env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.body.messages).toEqual([
      { role: 'system', content: 'Answer with a number.' },
      { role: 'user', content: 'What is 1+1?' },
      { role: 'assistant', content: '2' },
      { role: 'user', content: 'What is 3+3?' },
      { role: 'assistant', content: '6' },
      { role: 'user', content: 'What is 2+2?' },
    ]);
    p.remove();
  });
});

describe('secrets in a promptfoo config', () => {
  it('sends an apiKey written into the config but never writes it under .proctor', async () => {
    const p = tempProject({
      'promptfooconfig.yaml': `prompts: ["Say {{ w }}"]
providers:
  - id: openai:fake-model
    config: { apiBaseUrl: "${fake.url}", apiKey: sk-very-secret-42 }
tests:
  - vars: { w: hi }
    assert: [{ type: contains, value: "{{ w }}" }]
`,
    });
    fake.reset();
    const r = await runCli(['eval', 'run', '-q', 'promptfooconfig.yaml'], { cwd: p.dir });
    expect(r.code).toBe(0);
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-very-secret-42');
    expect(filesContaining(p.path('.proctor'), 'sk-very-secret-42')).toEqual([]);
    p.remove();
  });
});

describe('python assertions', () => {
  it('run through python3: expressions, bodies with return, file:// functions and CSV python: cells', async () => {
    const p = tempProject();
    cpSync(path.join(fixtures, 'python'), p.dir, { recursive: true });
    const ok = await runCli(['eval', 'run', 'promptfooconfig.yaml', '-q', '-o', 'out/ok'], { cwd: p.dir });
    expect(ok.code).toBe(0);
    expect(
      rowsOf(p.path('out/ok'))
        .map((r) => [r.identity.test, r.outcome])
        .sort(),
    ).toEqual([
      ['t1', 'passed'],
      ['t2', 'passed'],
    ]);
    // The file's function now returns 0.0 for t1: one of its four assertions fails.
    p.write('check.py', p.read('check.py').replace('"Tell me"', '"Nope"'));
    const bad = await runCli(['eval', 'run', 'promptfooconfig.yaml', '-q', '-o', 'out/bad'], { cwd: p.dir });
    expect(bad.code).toBe(1);
    const t1 = rowsOf(p.path('out/bad')).find((r) => r.identity.test === 't1');
    expect(t1).toMatchObject({ outcome: 'failed', score: 0.75 });
    p.remove();
  });
});

describe('finding a promptfoo config', () => {
  it('accepts a directory holding one, recognised by its content under any name', async () => {
    const config = `prompts: ["Say {{ word }}"]\nproviders: [echo]\ntests:\n  - vars: { word: [a, b, c] }\n`;
    const p = tempProject({ 'suite/promptfooconfig.yaml': config, 'other/evals.yaml': config });
    const named = await runCli(['eval', 'run', '--dry-run', 'suite'], { cwd: p.dir });
    expect(named.stdout).toBe('3 of 3 case(s) would run\n');
    const byContent = await runCli(['eval', 'run', '--dry-run', 'other'], { cwd: p.dir });
    expect(byContent.stdout).toBe('3 of 3 case(s) would run\n');
    const both = await runCli(['eval', 'run', '-q', 'suite', 'other'], { cwd: p.dir });
    expect(both.code).toBe(0);
    expect(new Set(rowsOf(onlyBundle(p)).map((r) => r.identity.eval))).toEqual(
      new Set(['suite/promptfooconfig.yaml', 'other/evals.yaml']),
    );
    p.remove();
  });
});

describe('anthropic and http providers, and a model judge', () => {
  let anthropic: FakeAnthropicServer;
  let agent: FakeHttpServer;
  let judge: FakeModelServer;
  beforeAll(async () => {
    anthropic = await startFakeAnthropicServer();
    agent = await startFakeHttpServer((req, res) => {
      const { q } = JSON.parse(req.body) as { q: string };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ output: { text: `agent: ${q}` } }));
    });
    judge = await startFakeModelServer({
      respond: (prompt) =>
        prompt.includes('polite') ? { toolInput: { reason: 'polite enough', pass: true, score: 0.9 } } : undefined,
    });
  });
  afterAll(async () => {
    await Promise.all([anthropic.close(), agent.close(), judge.close()]);
  });

  it('run through Proctor’s anthropic and http targets, graded by the llm-rubric judge options.provider names', async () => {
    const p = tempProject({
      'promptfooconfig.yaml': `prompts: ["Say {{ w }}"]
providers:
  - id: anthropic:messages:claude-test
    config: { apiBaseUrl: "${anthropic.url}" }
  - id: ${agent.url}/api
    label: agent
    config:
      method: POST
      body: { q: "{{ prompt }}" }
      transformResponse: json.output.text
defaultTest:
  options:
    provider: { id: "openai:chat:judge-model", config: { apiBaseUrl: "${judge.url}" } }
tests:
  - vars: { w: hello }
    assert:
      - { type: icontains, value: hello }
      - { type: llm-rubric, value: is polite }
`,
    });
    const r = await runCli(['eval', 'run', '-q', 'promptfooconfig.yaml', '-o', 'out'], {
      cwd: p.dir,
      env: { ANTHROPIC_API_KEY: 'sk-ant-test-key', OPENAI_API_KEY: 'sk-judge-test-key' },
    });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const rows = rowsOf(p.path('out'));
    expect(rows.map((row) => [row.identity.target, row.outcome]).sort()).toEqual([
      ['agent', 'passed'],
      ['anthropic:messages:claude-test', 'passed'],
    ]);
    expect(anthropic.requests.map((q) => q.body.model)).toEqual(['claude-test']);
    expect(agent.requests.map((q) => JSON.parse(q.body))).toEqual([{ q: 'Say hello' }]);
    // Both outputs were judged by the model options.provider names, not by a target under test.
    expect(judge.requests.filter((q) => q.body.model === 'judge-model')).toHaveLength(2);
    p.remove();
  });
});

/** Configs that each use one key Proctor does not run, and the exit-2 message that names it. */
const refused: [name: string, files: Record<string, string>, message: RegExp][] = [
  [
    'a top-level key',
    { 'promptfooconfig.yaml': 'prompts: [hi]\nproviders: [echo]\nscenarios:\n  - config: []\n' },
    /promptfooconfig\.yaml:3:1: promptfoo key "scenarios" is not supported by Proctor\n {2}fix: write each scenario/,
  ],
  [
    'a provider transform',
    {
      'promptfooconfig.yaml': 'prompts: [hi]\nproviders:\n  - id: openai:gpt-4o-mini\n    transform: output.trim()\n',
    },
    /promptfooconfig\.yaml:4:5: promptfoo key "transform" is not supported by Proctor\n {2}fix: transform the output/,
  ],
  [
    'an OpenAI parameter Proctor does not send',
    {
      'promptfooconfig.yaml': 'prompts: [hi]\nproviders:\n  - id: openai:gpt-4o-mini\n    config:\n      top_p: 0.5\n',
    },
    /promptfooconfig\.yaml:5:7: promptfoo key "top_p" is not supported by Proctor/,
  ],
  [
    'an assertion transform',
    {
      'promptfooconfig.yaml':
        'prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - type: contains\n        value: hi\n        transform: output.toUpperCase()\n',
    },
    /promptfooconfig\.yaml:7:9: promptfoo key "transform" is not supported by Proctor/,
  ],
  [
    'an assertion type Proctor lacks',
    {
      'promptfooconfig.yaml':
        'prompts: [hi]\nproviders: [echo]\ndefaultTest:\n  assert:\n    - type: levenshtein\n      value: hi\n',
    },
    /promptfooconfig\.yaml:5:13: promptfoo assertion type "levenshtein" is not supported by Proctor\n {2}fix: write the check as a `javascript` assertion/,
  ],
  [
    'test options other than the judge',
    {
      'promptfooconfig.yaml':
        'prompts: [hi]\nproviders: [echo]\ntests:\n  - options:\n      postprocess: output.trim()\n',
    },
    /promptfooconfig\.yaml:5:7: promptfoo key "postprocess" is not supported by Proctor/,
  ],
  [
    'a CSV column Proctor does not read',
    {
      'promptfooconfig.yaml': 'prompts: ["{{ q }}"]\nproviders: [echo]\ntests: file://tests.csv\n',
      'tests.csv': 'q,__prefix\nhi,x\n',
    },
    /tests\.csv:1:3: promptfoo column "__prefix" is not supported by Proctor/,
  ],
  [
    'a var computed by a script',
    {
      'promptfooconfig.yaml': 'prompts: ["{{ q }}"]\nproviders: [echo]\ntests:\n  - vars:\n      q: file://make.py\n',
      'make.py': 'print(1)\n',
    },
    /promptfooconfig\.yaml:5:10: a var computed by make\.py is not supported/,
  ],
  [
    'an http transformResponse that is code, not a path',
    {
      'promptfooconfig.yaml':
        'prompts: [hi]\nproviders:\n  - id: https://agent.example/api\n    config:\n      transformResponse: json.items.map((i) => i.text).join()\n',
    },
    /promptfooconfig\.yaml:5:26: only a plain path into the JSON reply \(e\.g\. `json\.output\.text`\) is supported as transformResponse/,
  ],
  [
    'an evaluate option',
    { 'promptfooconfig.yaml': 'prompts: [hi]\nproviders: [echo]\nevaluateOptions:\n  delay: 100\n' },
    /promptfooconfig\.yaml:4:3: promptfoo key "delay" is not supported by Proctor/,
  ],
];

describe('unsupported promptfoo keys are refused up front', () => {
  it.each(refused)('%s', async (_name, files, message) => {
    const p = tempProject(files);
    const r = await runCli(['eval', 'run', 'promptfooconfig.yaml'], { cwd: p.dir });
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
    expect(p.exists('.proctor/results')).toBe(false);
    p.remove();
  });
});
