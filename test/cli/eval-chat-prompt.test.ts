import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { onlyBundle, tempProject } from '../support/project.js';

let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer();
});
afterAll(async () => {
  await server.close();
});

describe('chat-format prompts', () => {
  it('send every message, rendered, after the target’s own system prompt; graders see the last user message', async () => {
    const p = tempProject({
      'chat.eval.yaml': `targets:
  - { label: model, kind: openai, base_url: "${server.url}", model: m, api_key: k, system: "You are terse." }
prompts:
  - id: convo
    messages:
      - { role: system, content: "Answer in {{ lang }}." }
      - { role: user, content: "Hi" }
      - { role: assistant, content: "Hello." }
      - { role: user, content: "Capital of {{ country }}?" }
  - [{ role: user, content: "Plain list form about {{ country }}" }]
tests:
  - vars: { lang: French, country: France }
    assert: [{ type: contains, value: "echo: " }]
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'chat.eval.yaml'], { cwd: p.dir });
      expect(run.code, run.stderr).toBe(0);
      const convo = server.requests.find((r) => r.prompt.includes('Capital'));
      expect(convo?.body.messages).toEqual([
        { role: 'system', content: 'You are terse.' },
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'Capital of France?' },
      ]);
      expect(server.requests.some((r) => r.prompt === 'Plain list form about France')).toBe(true);
      const rows = readIndex(onlyBundle(p)).rows;
      expect(rows.map((r) => r.identity.prompt).sort()).toEqual(['convo', 'p2']);
    } finally {
      p.remove();
    }
  });

  it('refuses a chat prompt without a user message, at its position', async () => {
    const p = tempProject({
      'bad.eval.yaml': `targets: [{ kind: echo }]
prompts:
  - [{ role: system, content: "only rules" }]
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'bad.eval.yaml'], { cwd: p.dir });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('bad.eval.yaml:3');
      expect(run.stderr).toContain('needs at least one user message');
    } finally {
      p.remove();
    }
  });
});
