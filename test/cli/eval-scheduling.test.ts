import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { tempProject } from '../support/project.js';

let server: FakeModelServer;

beforeAll(async () => {
  server = await startFakeModelServer({ modelLatencyMs: { slow: 600, fast: 20 } });
});
afterAll(async () => {
  await server.close();
});

const evalWith = (targets: string, tests: number) => `
targets:
${targets}
prompts: ["{{ q }}"]
default_test:
  assert: [{ type: contains, value: echo }]
tests:
${Array.from({ length: tests }, (_, i) => `  - { id: t${i}, vars: { q: "q${i}" } }`).join('\n')}
`;

describe('one work-conserving queue for the whole command', () => {
  it('gives a slow target every free slot once the fast one is done, never exceeding the budget', async () => {
    server.reset();
    const project = tempProject({
      'a.eval.yaml': evalWith(
        `  - { label: slow, kind: openai, base_url: "${server.url}", model: slow, api_key: k }
  - { label: fast, kind: openai, base_url: "${server.url}", model: fast, api_key: k }`,
        12,
      ),
    });
    const result = await runCli(['eval', 'run', '--max-concurrency', '4'], { cwd: project.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(server.requests.length).toBe(24);
    expect(server.peakInFlight).toBe(4);
    // A static split would cap the slow target at 2 slots; a shared queue lends it all 4.
    expect(server.peakInFlightFor('slow')).toBe(4);
  });

  it('spans every eval file of the command, and a per-target cap holds inside the global budget', async () => {
    server.reset();
    const slow = `  - { label: slow, kind: openai, base_url: "${server.url}", model: slow, api_key: k, max_concurrency: 2 }`;
    const fast = `  - { label: fast, kind: openai, base_url: "${server.url}", model: fast, api_key: k }`;
    const project = tempProject({ 'a.eval.yaml': evalWith(slow, 6), 'b.eval.yaml': evalWith(fast, 30) });
    const result = await runCli(['eval', 'run', '-j', '5'], { cwd: project.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(server.peakInFlightFor('slow')).toBe(2);
    expect(server.peakInFlight).toBe(5);
    // While the slow target holds its 2 slots, the fast one uses the other 3.
    expect(server.peakInFlightFor('fast')).toBeGreaterThanOrEqual(3);
  });

  it("keeps each eval file's own max_concurrency inside the command's budget, whatever the other files say", async () => {
    server.reset();
    const evalOf = (model: string, limit: number, tests: number) => `
targets:
  - { label: ${model}, kind: openai, base_url: "${server.url}", model: ${model}, api_key: k }
prompts: ["{{ q }} [[latency:300]]"]
default_test:
  assert: [{ type: contains, value: echo }]
tests:
${Array.from({ length: tests }, (_, i) => `  - { id: t${i}, vars: { q: "${model}-${i}" } }`).join('\n')}
evaluate_options: { max_concurrency: ${limit} }
`;
    const project = tempProject({ 'serial.eval.yaml': evalOf('serial', 1, 4), 'wide.eval.yaml': evalOf('wide', 8, 8) });
    const result = await runCli(['eval', 'run'], { cwd: project.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(server.requests.length).toBe(12);
    // The serial eval never has two cases in flight, while the wide one still runs several at once.
    expect(server.peakInFlightFor('serial')).toBe(1);
    expect(server.peakInFlightFor('wide')).toBeGreaterThan(1);
    expect(server.peakInFlight).toBeLessThanOrEqual(8);
  });

  it("lets -j replace proctor.toml's default max_concurrency for an eval file that declares none", async () => {
    server.reset();
    const project = tempProject({
      'proctor.toml': '[defaults]\nmax_concurrency = 2\n',
      'a.eval.yaml': `
targets:
  - { label: many, kind: openai, base_url: "${server.url}", model: many, api_key: k }
prompts: ["{{ q }} [[latency:300]]"]
tests:
${Array.from({ length: 6 }, (_, i) => `  - { id: t${i}, vars: { q: "many-${i}" } }`).join('\n')}
`,
    });
    const result = await runCli(['eval', 'run', '-j', '6'], { cwd: project.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(server.peakInFlightFor('many')).toBeGreaterThan(2);
  });
});
