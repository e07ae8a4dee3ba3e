import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { indexRows, onlyBundle, tempProject } from '../support/project.js';

const outcomes = (bundle: string): Record<string, string> =>
  Object.fromEntries(
    indexRows<{ identity: { test: string }; outcome: string }>(bundle).map((r) => [r.identity.test, r.outcome]),
  );

describe('templates everywhere', () => {
  it('renders {{ vars }} in assertion values, as the README example does', async () => {
    const p = tempProject({
      'a.eval.yaml': `targets: [{ kind: echo }]
prompts: ["Summarise in one line: {{ text }}"]
tests:
  - id: cats
    vars: { text: "Cats sleep a lot.", subject: cats }
    assert:
      - { type: icontains, value: "{{ subject }}", weight: 2 }
      - { type: not-contains, value: "As an AI", required: true }
  - id: wrong-subject
    vars: { text: "Cats sleep a lot.", subject: dogs }
    assert: [{ type: icontains, value: "{{ subject }}" }]
`,
    });
    const r = await runCli(['eval', 'run', '-q'], { cwd: p.dir });
    expect(outcomes(onlyBundle(p))).toEqual({ cats: 'passed', 'wrong-subject': 'failed' });
    expect(r.code).toBe(1);
    p.remove();
  });

  it('renders them in the commands and file names of steps, default_test’s included', async () => {
    const p = tempProject({
      'fixture/.keep': '',
      'a.eval.yaml': `targets: [{ kind: cli, command: "cat made-*.txt" }]
workspace: { template: fixture }
prompts: ["go"]
default_test:
  before: [{ id: make, type: exec, command: "printf '{{ word }}' > made-{{ word }}.txt" }]
  assert: [{ type: equals, value: "{{ word }}" }]
tests:
  - { id: one, vars: { word: alpha } }
  - { id: two, vars: { word: beta } }
`,
    });
    const r = await runCli(['eval', 'run', '-q'], { cwd: p.dir });
    expect(outcomes(onlyBundle(p))).toEqual({ one: 'passed', two: 'passed' });
    expect(r.code).toBe(0);
    p.remove();
  });

  it('takes a variable that only --var gives as given', async () => {
    const p = tempProject({
      'a.eval.yaml': `targets: [{ kind: echo }]
prompts: ["Hi {{ name }}"]
default_test:
  assert: [{ type: contains, value: "{{ name }}" }]
tests:
  - assert: [{ type: icontains, value: "{{ name }}" }]
`,
    });
    expect((await runCli(['eval', 'run', '-q'], { cwd: p.dir })).code).toBe(2);
    const r = await runCli(['eval', 'run', '-q', '--var', 'name=Ada'], { cwd: p.dir });
    expect(r.code, r.stderr).toBe(0);
    p.remove();
  });

  it('refuses a variable that no test gives, at file:line:col, before running anything', async () => {
    const cases: [string, RegExp][] = [
      [
        'targets: [{ kind: echo }]\nprompts: ["Hi {{ name }}, {{ nmae }}"]\ntests:\n  - vars: { name: Ada }\n',
        /^error: a\.eval\.yaml:2:11: \{\{ nmae \}\} in this prompt is given by no test\n {2}fix: did you mean \{\{ name \}\}\? If not, add `nmae` to the vars of a test/,
      ],
      [
        'targets: [{ kind: echo }]\nprompts: ["Hi {{ name }}"]\ntests:\n  - vars: { name: Ada }\n    assert:\n      - { type: contains, value: "{{ subject }}" }\n',
        /^error: a\.eval\.yaml:6:34: \{\{ subject \}\} in this assertion is not among the test's vars \(name\)/,
      ],
      [
        'targets: [{ kind: echo }]\nprompts: ["Hi {{ name }}"]\ndefault_test:\n  before: [{ id: s, type: exec, command: "echo {{ nope }}" }]\ntests:\n  - vars: { name: Ada }\n',
        /^error: a\.eval\.yaml:4:42: \{\{ nope \}\} in this step is given by no test/,
      ],
    ];
    for (const [text, message] of cases) {
      const p = tempProject({ 'a.eval.yaml': text });
      const r = await runCli(['eval', 'run', '-q'], { cwd: p.dir });
      expect(r.stderr).toMatch(message);
      expect(r.code).toBe(2);
      expect(p.exists('.proctor/results')).toBe(false);
      p.remove();
    }
  });
});
