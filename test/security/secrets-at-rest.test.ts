import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../support/cli.js';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startFakeHttpServer } from '../support/fake-http-server.js';
import { sendJson, startFakeModelServer } from '../support/fake-model-server.js';
import { filesContaining } from '../support/files.js';
import { gitRepo } from '../support/git-repo.js';
import { tempProject } from '../support/project.js';

// Unique per test run, so a hit can only come from this run, never from a fixture or an earlier test.
const secret = (prefix: string): string => `${prefix}-${randomBytes(12).toString('hex')}`;
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Every place a value of the run can rest: files under `.proctor/` (SQLite db and WAL as raw bytes) and what was printed. */
const assertNowhere = (dir: string, outputs: readonly CliResult[], secrets: readonly string[]): void => {
  for (const s of secrets) {
    expect(filesContaining(join(dir, '.proctor'), s)).toEqual([]);
    for (const o of outputs) expect(`${o.stdout}${o.stderr}`).not.toContain(s);
  }
};

// A coding agent stand-in: proves it got the real key (its hash), then writes it into a tracked and an
// untracked captured file and prints it, so the capture, the output and the transcript all carry it.
const agent = `#!/bin/sh
cat > /dev/null
printf 'key sha256=%s\\n' "$(printf %s "$MY_API_KEY" | sha256sum | cut -c1-64)"
echo "key=$MY_API_KEY" >> tracked.txt
echo "$MY_API_KEY" > untracked.txt
echo "I saw $MY_API_KEY"
`;

// Prints the hash of each value given on the command line, then each raw value: the run used them, and tried to leak them.
const hasher = `import { createHash } from 'node:crypto';
const overrides = JSON.parse(process.env.PROCTOR_OVERRIDES);
const hash = (s) => createHash('sha256').update(s).digest('hex');
console.log(\`seed=\${hash(process.env.TOK)} set=\${hash(overrides.token)} named=\${hash(overrides.password)}\`);
console.log(\`raw \${process.env.TOK} \${overrides.token} \${overrides.password}\`);
`;

const givenTask = `id: given
steps:
  - { id: first, type: exec, command: echo start }
  - id: use
    type: exec
    command: node hash.mjs
    env: { TOK: "{{ seed.tok }}" }
  - id: ask
    type: prompt
    target: { kind: echo }
    prompt: "token {{ overrides.token }} password {{ overrides.password }} seed {{ seed.tok }}"
  - id: check
    type: verify
    input: use
    assert: [{ type: contains, value: "seed={{ seed.hash }} set={{ seed.hash }} named={{ seed.named_hash }}" }]
`;

describe('secrets at rest', () => {
  it('an eval workspace agent that writes and prints the key leaves it in no file, bundle or export', async () => {
    const key = secret('sk-test');
    const p = tempProject({ 'agent.sh': agent });
    gitRepo(p.path('upstream'), { 'tracked.txt': 'hello\n' });
    p.write(
      'ws.eval.yaml',
      `workspace:
  repos: [{ url: ./upstream, ref: main }]
  files: [tracked.txt, untracked.txt]
targets: [{ kind: cli, command: "sh ${p.path('agent.sh')}" }]
prompts: ["leak it"]
tests:
  - id: leaky
    assert: [{ type: contains, value: "key sha256=${sha256(key)}" }]
`,
    );
    const env = { MY_API_KEY: key };
    const run = await runCli(['eval', 'run', 'ws.eval.yaml', '-o', '.proctor/results/ws'], { cwd: p.dir, env });
    // Passed: the agent hashed the real key, so it had it in memory while every record of it is redacted.
    expect(run.code, run.stderr).toBe(0);
    const [key1] = readdirSync(p.path('.proctor/results/ws/cases'));
    const artifacts = `.proctor/results/ws/cases/${key1}/1`;
    // The capture path was reached: the tracked change and the untracked file are there, with the key cut out.
    expect(p.read(`${artifacts}/workspace.diff`)).toContain('+key=[redacted]');
    expect(p.read(`${artifacts}/workspace.diff`)).toContain('+++ b/untracked.txt');
    expect(JSON.parse(p.read(`${artifacts}/workspace.files.json`)).files).toEqual({
      'tracked.txt': 'hello\nkey=[redacted]\n',
      'untracked.txt': '[redacted]\n',
    });
    expect(JSON.parse(p.read(`${artifacts}/result.json`)).output).toContain('I saw [redacted]');

    const formats = ['jsonl', 'junit', 'html'];
    // Read-only commands, so they may run together; each export goes to a file under .proctor/ (stdout prints the same).
    const reads = await Promise.all([
      ...formats.map((f) =>
        runCli(['results', 'export', 'ws', '--format', f, '-o', `.proctor/exports/ws.${f}`], { cwd: p.dir, env }),
      ),
      runCli(['results', 'show', 'ws'], { cwd: p.dir, env }),
      runCli(['runs', 'list'], { cwd: p.dir, env }),
    ]);
    for (const r of reads) expect(r.code, r.stderr).toBe(0);
    expect(p.read('.proctor/exports/ws.html')).toContain('[redacted]');
    const outputs = [run, ...reads];
    assertNowhere(p.dir, outputs, [key]);
    p.remove();
  });

  it('task run --set and --seed use secret values but store, export and print none, and a resume still gets them', async () => {
    const key = secret('sk-test');
    // Not in the environment: secret because it is given under a credential's name.
    const password = secret('pw');
    const p = tempProject({ 'given.task.yaml': givenTask, 'hash.mjs': hasher });
    const env = { OPENAI_API_KEY: key };
    const flags = [
      '--set',
      `token=${key}`,
      '--set',
      `password=${password}`,
      '--seed',
      `tok=${key}`,
      '--seed',
      `hash=${sha256(key)}`,
      '--seed',
      `named_hash=${sha256(password)}`,
    ];
    const first = await runCli(['task', 'run', 'given.task.yaml', ...flags, '--output-dir', '.proctor/out'], {
      cwd: p.dir,
      env,
    });
    // Passed: the step received the real values given with --seed and --set.
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('raw [redacted] [redacted] [redacted]');
    expect(first.stdout).toContain('token [redacted] password [redacted] seed [redacted]');
    const [runDir] = readdirSync(p.path('.proctor/out'));
    // The saved context, plus a secret the user put in it: the resumed run starts from it, and stores it redacted.
    const saved = JSON.parse(p.read(`.proctor/out/${runDir}/context.json`));
    saved.context.note = `from the file: ${key}`;
    p.write('saved.json', JSON.stringify(saved));
    const resumed = await runCli(
      [
        'task',
        'run',
        'given.task.yaml',
        ...flags,
        '--context-json',
        'saved.json',
        '--start-step',
        'use',
        '--output-dir',
        '.proctor/resumed',
      ],
      { cwd: p.dir, env },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('· first (seeded)');
    expect(resumed.stdout).toContain('✓ check passed');
    const [resumedDir] = readdirSync(p.path('.proctor/resumed'));
    expect(JSON.parse(p.read(`.proctor/resumed/${resumedDir}/context.json`)).context.note).toBe(
      'from the file: [redacted]',
    );
    const [runs, ...shows] = await Promise.all([
      runCli(['runs', 'list'], { cwd: p.dir, env }),
      ...[runDir, resumedDir].map((id) => runCli(['runs', 'show', id as string, '--json'], { cwd: p.dir, env })),
    ]);
    for (const show of shows) {
      expect(show.code, show.stderr).toBe(0);
      // The stored spec and metadata were reached: they hold the values, redacted.
      expect(show.stdout).toContain('"token": "[redacted]"');
    }
    // saved.json is the user's own file, outside .proctor/.
    assertNowhere(p.dir, [first, resumed, runs, ...shows], [key, password]);
    p.remove();
  });

  it('a key written literally in a target config is used for the request and stored nowhere', async () => {
    const server = await startFakeModelServer();
    const key = secret('sk-literal');
    const header = secret('hdr');
    const p = tempProject({
      'model.eval.yaml': `targets:
  - { label: model, kind: openai, base_url: ${server.url}, model: fake-1, api_key: ${key}, headers: { x-org-key: ${header} } }
prompts: ["say [[reply:ok]]"]
tests: [{ id: t, assert: [{ type: equals, value: ok }] }]
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'model.eval.yaml'], { cwd: p.dir });
      expect(run.code, run.stderr).toBe(0);
      // The server got both as sent: the run used the real values.
      expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${key}`);
      expect(server.requests[0]?.headers['x-org-key']).toBe(header);
      assertNowhere(p.dir, [run], [key, header]);
    } finally {
      await server.close();
      p.remove();
    }
  });

  it('anthropic and http targets and a judge use their keys but store and export none', async () => {
    const judgeServer = await startFakeModelServer({ respond: () => ({ text: '{"pass": true, "score": 1}' }) });
    const claude = await startFakeAnthropicServer();
    // An in-house agent that repeats the bearer token it got: the output itself carries the key.
    const agent = await startFakeHttpServer((req, res) =>
      sendJson(res, 200, { text: `I saw ${req.headers.authorization}` }),
    );
    const anthropicKey = secret('sk-ant');
    const httpKey = secret('my-api');
    const judgeKey = secret('sk-judge');
    const p = tempProject({
      'proctor.toml': `[targets.claude]
kind = "anthropic"
base_url = "${claude.url}"
model = "claude-fake"

[targets.myapi]
kind = "http"
url = "${agent.url}/ask"
headers = { Authorization = "Bearer \${MYAPI_KEY}" }
body = '{"q": {{ prompt | json }}}'
response = { output = "$.text" }

[targets.grader]
kind = "openai"
base_url = "${judgeServer.url}"
model = "judge"
api_key = "${judgeKey}"

[defaults]
judge = "grader"
`,
      'keys.eval.yaml': `targets: [claude, myapi]
prompts: ["hello"]
tests: [{ id: t, assert: [{ type: llm-rubric, value: answers }] }]
`,
    });
    const env = { ANTHROPIC_API_KEY: anthropicKey, MYAPI_KEY: httpKey };
    try {
      const run = await runCli(['eval', 'run', 'keys.eval.yaml', '-o', '.proctor/results/keys'], { cwd: p.dir, env });
      expect(run.code, run.stderr).toBe(0);
      expect(claude.requests[0]?.headers['x-api-key']).toBe(anthropicKey);
      expect(agent.requests[0]?.headers.authorization).toBe(`Bearer ${httpKey}`);
      expect(judgeServer.requests[0]?.headers.authorization).toBe(`Bearer ${judgeKey}`);
      const reads = await Promise.all(
        ['jsonl', 'junit', 'html'].map((f) =>
          runCli(['results', 'export', 'keys', '--format', f, '-o', `.proctor/exports/keys.${f}`], { cwd: p.dir, env }),
        ),
      );
      for (const r of reads) expect(r.code, r.stderr).toBe(0);
      assertNowhere(p.dir, [run, ...reads], [anthropicKey, httpKey, judgeKey]);
    } finally {
      await Promise.all([judgeServer.close(), claude.close(), agent.close()]);
      p.remove();
    }
  });

  it('refuses a secret seed in an id, at the id, naming no secret and running nothing', async () => {
    const key = secret('sk-test');
    const p = tempProject({
      'ids.task.yaml':
        'id: ids\nsteps:\n  - { id: first, type: exec, command: "touch ran" }\n  - { id: "use-{{ seed.tok }}", type: exec, command: "true" }\n',
    });
    const result = await runCli(['task', 'run', 'ids.task.yaml', '--seed', `tok=${key}`], {
      cwd: p.dir,
      env: { MY_API_KEY: key },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/ids\.task\.yaml:4:\d+: id "use-\[redacted\]" would hold a secret value/);
    expect(result.stderr).not.toContain(key);
    expect(p.exists('ran')).toBe(false);
    expect(p.exists('.proctor')).toBe(false);
    p.remove();
  });

  it('a service that prints the key and dies before it is ready leaves no log holding it', async () => {
    const key = secret('sk-test');
    const p = tempProject({
      'svc.task.yaml': `id: svc
steps:
  - { id: svc, type: exec, background: true, command: 'echo "svc has $MY_API_KEY"; exit 1', ready: { tcp: "127.0.0.1:1" } }
`,
    });
    const result = await runCli(['task', 'run', 'svc.task.yaml'], { cwd: p.dir, env: { MY_API_KEY: key } });
    expect(result.code).toBe(1);
    // The log was read (its tail is the error): the service really printed the key.
    expect(result.stdout).toContain('exited before it was ready: svc has [redacted]');
    assertNowhere(p.dir, [result], [key]);
    p.remove();
  });
});
