import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { lockDir } from '../../src/bundle/lock.js';
import { readIndex } from '../../src/bundle/reader.js';
import { runCli, startCli, waitFor } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { type TempProject, tempProject } from '../support/project.js';

// Mutable: the server reads it per request, so a test can hold cases in flight and then let them through.
const latency: Record<string, number> = { m: 0 };
let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer({ modelLatencyMs: latency });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
  latency.m = 0;
});

const cases = 3;

/** A bundle whose cases all errored once: a --resume runs each of them again. */
const erroredBundle = async (): Promise<TempProject> => {
  const tests = Array.from(
    { length: cases },
    (_, i) =>
      `  - { id: t${i}, vars: { q: "lock-${i} [[status:500 times:1]]" }, assert: [{ type: contains, value: echo }] }`,
  );
  const p = tempProject({
    'a.eval.yaml': `targets: [{ label: model, kind: openai, base_url: "${server.url}", model: m, api_key: k }]
prompts: ["{{ q }}"]
tests:
${tests.join('\n')}
`,
  });
  const first = await runCli(['eval', 'run', '-q', '--retries', '0', '-o', 'out'], { cwd: p.dir });
  expect(first.code, first.stderr).toBe(1);
  expect(readIndex(p.path('out')).rows.every((r) => r.outcome === 'error')).toBe(true);
  return p;
};

const resumeArgs = ['eval', 'run', '--retries', '0', '-j', '1', '--resume', 'out'];
const lockFiles = (p: TempProject): string[] =>
  p.exists(`out/${lockDir}`) ? readdirSync(p.path(`out/${lockDir}`)).filter((n) => n.endsWith('.json')) : [];

describe('one writer per bundle', () => {
  it('a second --resume of a bundle being written is refused (exit 2, nothing run); Ctrl-C releases the bundle', async () => {
    const p = await erroredBundle();
    const seen = server.requests.length;
    latency.m = 600_000;
    const first = startCli(resumeArgs, { cwd: p.dir });
    // The first command has a case in flight (held by the server): it is writing the bundle.
    await waitFor(() => server.requests.length > seen);
    const second = await runCli(resumeArgs, { cwd: p.dir, timeoutMs: 20_000 });
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toMatch(
      new RegExp(`bundle .*out is being written by another command \\(pid ${first.child.pid} on [^)]*\\)[\\s\\S]*fix:`),
    );
    expect(server.requests.length).toBe(seen + 1);
    expect(readIndex(p.path('out')).rows).toHaveLength(cases);
    first.child.kill('SIGINT');
    const stopped = await first.done;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(lockFiles(p)).toEqual([]);
  });

  it('a lock left by a SIGKILLed writer is taken over', async () => {
    const p = await erroredBundle();
    const seen = server.requests.length;
    latency.m = 600_000;
    const killed = startCli(resumeArgs, { cwd: p.dir });
    await waitFor(() => server.requests.length > seen);
    expect(lockFiles(p)).toEqual([expect.stringMatching(new RegExp(`-${killed.child.pid}\\.json$`))]);
    killed.child.kill('SIGKILL');
    await killed.done;
    expect(lockFiles(p)).toHaveLength(1);
    latency.m = 0;
    const resumed = await runCli(resumeArgs, { cwd: p.dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(lockFiles(p)).toEqual([]);
  });
});
