import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { stepConfig } from '../../src/engine/step-config.js';
import { steps } from '../../src/engine/steps/registry.js';
import type { StepDef } from '../../src/engine/steps/step.js';
import { type ResolvedAssertion, resolveAssertion } from '../../src/graders/assertion.js';
import { caseTask } from '../../src/plan/compile-task.js';
import { loadProjectConfig } from '../../src/plan/config.js';
import { fingerprinter } from '../../src/plan/fingerprint.js';
import { loadEvalFile } from '../../src/plan/load-eval.js';
import { expandMatrix } from '../../src/plan/matrix.js';
import { inputError, tempProject } from './temp-project.js';

const load = (yaml: string) => {
  const root = tempProject({ 'proctor.toml': '[targets.echo]\nkind = "echo"\n', 'evals/a.eval.yaml': yaml });
  return { root, spec: loadEvalFile(path.join(root, 'evals/a.eval.yaml'), loadProjectConfig(root, {}), {}) };
};

const expand = ({ root, spec }: ReturnType<typeof load>) => expandMatrix([spec], fingerprinter(root, {}));

const around = `
workspace: { template: fixture, setup: ["npm ci"], files: [out.txt] }
prompts: ["go"]
default_test:
  before: [{ id: seed, type: exec, command: echo seed }]
  after: [{ id: snap, type: snapshot }]
tests:
  - id: one
    before: [{ id: mine, type: exec, command: echo mine }]
    after: [{ id: last, type: exec, command: echo last, depends_on: [prompt] }]
  - id: two
`;

describe('steps around a test prompt', () => {
  it('compiles workspace, default_test and test steps around the prompt and verify steps', () => {
    const loaded = load(around);
    const { root } = loaded;
    const [one, two] = expand(loaded);
    const ids = (c: typeof one) => caseTask(c as NonNullable<typeof one>, undefined, root).steps.map((s) => s.id);
    expect(ids(one)).toEqual(['workspace', 'seed', 'mine', 'prompt', 'verify', 'snap', 'last']);
    expect(ids(two)).toEqual(['workspace', 'seed', 'prompt', 'verify', 'snap']);
    const task = caseTask(one as NonNullable<typeof one>, undefined, root);
    // Nothing names a path of this machine: steps resolve against the executing checkout's root.
    expect(task.workRoot).toBeUndefined();
    expect(JSON.stringify(task)).not.toContain(root);
    expect(task.steps[0]?.config).toEqual({ template: 'fixture', setup: ['npm ci'], files: ['out.txt'] });
    expect(one?.fingerprint).not.toBe(two?.fingerprint);
  });

  it('builds the prompt and verify configs as their schemas would parse them, so the engine takes them as they are', () => {
    const loaded = load(
      'prompts: ["say {{ x }}"]\ntests: [{ vars: { x: hi }, assert: [{ type: contains, value: hi }] }]\n',
    );
    const [one] = expand(loaded);
    const task = caseTask(one as NonNullable<typeof one>, undefined, loaded.root);
    for (const step of task.steps.filter((s) => s.type === 'prompt' || s.type === 'verify')) {
      const def: StepDef = steps[step.type as 'prompt' | 'verify'];
      expect(def.config().parse(step.config)).toEqual(step.config);
      expect(stepConfig(def, step.config)).toBe(step.config);
    }
  });

  it('leaves an assertion a template changed to be checked again when its grader is made', () => {
    const loaded = load(
      'prompts: ["go"]\ntests: [{ vars: { x: "" }, assert: [{ type: contains, value: "{{ x }}" }, { type: contains, value: hi }] }]\n',
    );
    const [one] = expand(loaded);
    const verify = caseTask(one as NonNullable<typeof one>, undefined, loaded.root).steps.find(
      (s) => s.type === 'verify',
    );
    const [rendered, written] = (verify?.config.assert ?? []) as unknown as ResolvedAssertion[];
    expect(() => resolveAssertion(rendered as ResolvedAssertion, { baseDir: loaded.root })).toThrowError(ZodError);
    expect(resolveAssertion(written as ResolvedAssertion, { baseDir: loaded.root }).id).toBe('contains');
  });

  it('puts the steps in the fingerprint, and leaves a plain test’s fingerprint as it was', () => {
    const plain = expand(load('prompts: ["go"]\ntests: [{ id: one }]\n'))[0];
    const withStep = expand(load('prompts: ["go"]\ntests: [{ id: one, after: [{ id: s, type: snapshot }] }]\n'))[0];
    const otherStep = expand(
      load('prompts: ["go"]\ntests: [{ id: one, after: [{ id: s, type: snapshot, diff: false }] }]\n'),
    )[0];
    expect(new Set([plain?.fingerprint, withStep?.fingerprint, otherStep?.fingerprint]).size).toBe(3);
  });

  it('reports a bad step, a taken id and a bad workspace at file:line:col', () => {
    const missing = inputError(() => load('prompts: ["go"]\ntests:\n  - before:\n      - { id: x, type: exec }\n'));
    expect(missing.format()).toMatch(/^evals\/a\.eval\.yaml:4:\d+: .*command/);
    const taken = inputError(() =>
      load('prompts: ["go"]\ntests:\n  - before:\n      - { id: prompt, type: exec, command: x }\n'),
    );
    expect(taken.format()).toMatch(/^evals\/a\.eval\.yaml:4:\d+: duplicate step id "prompt"/);
    const ws = inputError(() => load('prompts: ["go"]\nworkspace:\n  repos: [{ url: x, path: ../out }]\n'));
    expect(ws.format()).toMatch(/^evals\/a\.eval\.yaml:3:\d+: .*inside the workspace/);
  });

  it("names the key a step type does not know, at its column, with the step's keys and its type's", () => {
    const error = inputError(() =>
      load('prompts: ["go"]\ntests:\n  - before:\n      - { id: x, type: exec, command: y, colour: red }\n'),
    );
    expect(error.format()).toMatch(/^evals\/a\.eval\.yaml:4:42: unknown key "colour" in tests\[0\]\.before\[0\]/);
    expect(error.hint).toMatch(/Known keys: .*\bid\b.*\btype\b.*\bcommand\b.*\bready\b/);
  });
});
