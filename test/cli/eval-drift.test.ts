import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../src/bundle/summary.js';
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

const run = (p: TempProject, ...args: string[]) => runCli(['eval', 'run', '--retries', '0', ...args], { cwd: p.dir });

const evalText = (errPrompt: string) => `
targets:
  - { label: model, kind: openai, base_url: "${server.url}", model: drift-model, api_key: k }
prompts: ["{{ q }}"]
tests:
  - { id: kept, vars: { q: "drift-kept" }, assert: [{ type: contains, value: echo }] }
  - { id: broken, vars: { q: "${errPrompt}" }, assert: [{ type: contains, value: echo }] }
`;

describe('--resume and drift', () => {
  it('re-runs an errored case whose config changed, without a drift refusal: its old result is not kept', async () => {
    const p = tempProject({ 'a.eval.yaml': evalText('drift-broken [[status:500]]') });
    const first = await run(p);
    expect(first.code, first.stderr).toBe(1);
    const bundle = onlyBundle(p);
    // The user fixes the cause of the error: the case's prompt (so its fingerprint) changes.
    p.write('a.eval.yaml', evalText('drift-fixed'));
    const resumed = await run(p, '--resume', bundle);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toMatch(/changed since/);
    expect(resumed.stderr).toContain('Resume: running 1 case(s)');
    expect(server.countFor('drift-fixed')).toBe(1);
    expect(server.countFor('drift-kept')).toBe(1);
    const summary = JSON.parse(readFileSync(join(bundle, 'summary.json'), 'utf8')) as Summary;
    expect(summary.counts).toMatchObject({ total: 2, passed: 2, error: 0 });
  });
});
