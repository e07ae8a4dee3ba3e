import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../src/bundle/summary.js';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { tempProject } from '../support/project.js';

const examples = fileURLToPath(new URL('../../examples', import.meta.url));

const summaryOf = (dir: string): Summary => {
  const results = join(dir, '.proctor', 'results');
  const [id] = readdirSync(results);
  return JSON.parse(readFileSync(join(results, id as string, 'summary.json'), 'utf8')) as Summary;
};

describe('examples', () => {
  let server: FakeModelServer;
  beforeAll(async () => {
    server = await startFakeModelServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('quickstart runs offline and the careful agent beats the hasty one', async () => {
    const project = tempProject();
    cpSync(join(examples, 'quickstart'), join(project.dir, 'examples', 'quickstart'), { recursive: true });
    const result = await runCli(['eval', 'run', 'examples/quickstart'], { cwd: project.dir });
    expect(result.code, result.stderr).toBe(1);
    const summary = summaryOf(project.dir);
    const byTarget = new Map(summary.targets.map((t) => [t.target, t]));
    expect(summary.counts).toMatchObject({ total: 12, error: 0 });
    expect(byTarget.get('careful')?.passed).toBe(6);
    expect(byTarget.get('hasty')?.passed).toBeLessThan(4);
    expect(result.stdout).toMatch(/careful\s+6\s+6\s+0/);
  });

  it('openai runs the same shape against OPENAI_BASE_URL', async () => {
    const project = tempProject();
    cpSync(join(examples, 'openai'), join(project.dir, 'examples', 'openai'), { recursive: true });
    const validate = await runCli(['eval', 'validate', 'examples/openai'], {
      cwd: project.dir,
      env: { OPENAI_BASE_URL: undefined },
    });
    expect(validate.code, validate.stderr).toBe(0);
    const result = await runCli(['eval', 'run', 'examples/openai'], {
      cwd: project.dir,
      env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'sk-example' },
    });
    // The fake server echoes, so most graders fail: what matters is that every case ran and was graded.
    expect(result.code, result.stderr).toBe(1);
    expect(summaryOf(project.dir).counts).toMatchObject({ total: 10, error: 0 });
    expect(server.requests.length).toBe(10);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-example');
  });
});
