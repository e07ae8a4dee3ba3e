// biome-ignore-all lint/suspicious/noTemplateCurlyInString: proctor.toml's ${VAR} references are under test.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { onlyBundle, type TempProject, tempProject } from '../support/project.js';

let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer();
});
afterAll(async () => {
  await server.close();
});

const run = (p: TempProject, env: Record<string, string>, ...args: string[]) =>
  runCli(['eval', 'run', '--retries', '0', ...args], { cwd: p.dir, env });

/** Every file under `dir`, recursively. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );

const drift = /1 case\(s\) changed since[\s\S]*--allow-drift/;

describe('fingerprints: what --resume compares', () => {
  it('hash the resolved ${ENV} values of a target, so switching OPENAI_MODEL is drift; the secret never reaches disk', async () => {
    const secret = 'sk-fingerprint-secret-3141592';
    const p = tempProject({
      'proctor.toml': `[targets.model]
kind = "openai"
base_url = "${server.url}"
model = "\${OPENAI_MODEL:-fp-model-a}"
api_key = "\${FP_SECRET_KEY}"
`,
      'a.eval.yaml':
        'targets: [model]\nprompts: ["{{ q }}"]\ntests:\n  - { id: t1, vars: { q: fp-env }, assert: [{ type: contains, value: echo }] }\n',
    });
    const env = { OPENAI_MODEL: 'fp-model-a', FP_SECRET_KEY: secret };
    const first = await run(p, env);
    expect(first.code, first.stderr).toBe(0);
    const bundle = onlyBundle(p);

    const same = await run(p, env, '--resume', bundle);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toContain('Resume: running 0 case(s)');

    const switched = await run(p, { ...env, OPENAI_MODEL: 'fp-model-b' }, '--resume', bundle);
    expect(switched.code, switched.stderr).toBe(2);
    expect(switched.stderr).toMatch(drift);
    expect(server.requests.filter((r) => r.body.model === 'fp-model-b')).toHaveLength(0);

    for (const file of filesUnder(p.path('.proctor'))) expect(readFileSync(file).includes(secret), file).toBe(false);
  });

  it('hash grader and agent files by content: editing the agent, a javascript grader file or a script is drift', async () => {
    const p = tempProject({
      'a.eval.yaml': `targets:
  - { label: agent, kind: cli, command: "node agents/careful.js" }
prompts: ["{{ q }}"]
tests:
  - id: t1
    vars: { q: hello }
    assert:
      - { type: javascript, value: file://checks/short.mjs }
      - { type: script, command: "node checks/ok.js" }
`,
      'agents/careful.js': "process.stdout.write('careful answer');\n",
      'checks/short.mjs': 'export default (output) => output.length < 200;\n',
      'checks/ok.js': 'process.exit(0);\n',
    });
    const first = await run(p, {});
    expect(first.code, first.stderr).toBe(0);
    const bundle = onlyBundle(p);
    const same = await run(p, {}, '--resume', bundle);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toContain('Resume: running 0 case(s)');

    for (const file of ['agents/careful.js', 'checks/short.mjs', 'checks/ok.js']) {
      const text = p.read(file);
      p.write(file, `// edited\n${text}`);
      const edited = await run(p, {}, '--resume', bundle);
      expect(edited.code, `${file}: ${edited.stderr}`).toBe(2);
      expect(edited.stderr).toMatch(drift);
      p.write(file, text);
    }
  });
});
