// A JSONL file's tests are held by their line's place in the file and read back when their case is taken: what
// a case runs must be exactly what the same tests written in YAML give, and a file changed meanwhile is refused.
import { appendFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { loadProjectConfig } from '../../src/plan/config.js';
import { type EvalRunFlags, planEvalRun } from '../../src/plan/eval-plan.js';
import { HeldTest } from '../../src/plan/held-test.js';
import type { PlannedCase } from '../../src/plan/matrix.js';
import type { SubmitRequest } from '../../src/runners/runner.js';
import { inputError, tempProject } from './temp-project.js';

const tests = [
  { id: 'ada', vars: { name: 'Ada' }, assert: [{ type: 'contains', value: '{{ name }}' }] },
  { description: 'judged', vars: { name: 'Bo' }, assert: [{ type: 'llm-rubric', value: 'greets {{ name }}' }] },
  {
    vars: { name: 'Cy', lang: 'fr' },
    threshold: 0.5,
    metadata: { team: 'x' },
    before: [{ id: 'b', type: 'snapshot' }],
  },
  { id: 'dee', vars: { name: 'Dee' }, assert: [{ type: 'equals', value: 'hi Dee' }], repeat: 2 },
];

const evalFile = (ref: string): string => `
targets: [{ kind: echo }, { kind: echo, label: loud, prefix: "!" }]
judges: { grader: { kind: echo } }
evaluate_options: { judge: grader }
prompts: ["Say hi to {{ name }} in {{ lang }} ({{ mood }})", "Greet {{ name }}"]
default_test:
  vars: { lang: en, mood: calm }
  assert: [{ type: is-json, weight: 0 }]
tests: file://${ref}
`;

/** A project whose eval reads the tests above from `tests.jsonl`, or from `tests.yaml` as a YAML list. */
const project = (ref: 'tests.jsonl' | 'tests.yaml', lines = tests.map((t) => JSON.stringify(t))): string =>
  tempProject({
    'proctor.toml': '',
    'suite.eval.yaml': evalFile(ref),
    'tests.jsonl': `${lines.join('\n')}\n`,
    'tests.yaml': tests.map((t) => `- ${JSON.stringify(t)}\n`).join(''),
  });

/** A plan that holds every JSONL test by its line (a plan holds its first wholeJsonlTests whole). */
const plan = (dir: string, flags: EvalRunFlags = {}, wholeTests = 0) =>
  planEvalRun(loadProjectConfig(dir, {}), dir, [], flags, {}, { wholeTests });

/** What a case runs and how it is known, without the group id each plan draws anew. */
const ran = (r: SubmitRequest) => ({ task: r.task, key: r.case?.key, fingerprint: r.case?.fingerprint });

describe('tests held by their line in a JSONL file', () => {
  it('give the requests the same tests written in YAML give: default_test, --var, templates, judges and steps', () => {
    for (const flags of [{}, { var: ['mood=glad'], filterPattern: 'judged|dee' }] as EvalRunFlags[]) {
      const held = plan(project('tests.jsonl'), flags);
      const whole = plan(project('tests.yaml'), flags);
      expect(held.requests.peek()?.test).toBeInstanceOf(HeldTest);
      expect(whole.requests.peek()?.test).not.toBeInstanceOf(HeldTest);
      expect(held.requests.size).toBe(whole.requests.size);
      const size = held.requests.size;
      expect(held.requests.take(size).map(ran)).toEqual(whole.requests.take(size).map(ran));
    }
  });

  it("are held whole up to the plan's count, across its eval files, and give the same requests either way", () => {
    const dir = project('tests.jsonl');
    writeFileSync(`${dir}/other.eval.yaml`, evalFile('tests.jsonl'));
    /** How each eval file's tests are held, file by file: whole, or by their line. */
    const holding = (planned: ReturnType<typeof plan>): string[][] => {
      const files = new Map<string, Map<string, string>>();
      for (let i = 0; i < planned.requests.size; i++) {
        const c = planned.requests.peek(i) as PlannedCase;
        const file = files.get(c.eval.path) ?? new Map<string, string>();
        files.set(c.eval.path, file.set(c.test.id, c.test instanceof HeldTest ? 'line' : 'whole'));
      }
      return [...files.values()].map((file) => [...file.values()]);
    };
    const byLine = plan(dir);
    const mixed = plan(dir, {}, tests.length + 1);
    expect(holding(byLine).flat()).not.toContain('whole');
    expect(holding(mixed)).toEqual([
      ['whole', 'whole', 'whole', 'whole'],
      ['whole', 'line', 'line', 'line'],
    ]);
    // By default (wholeJsonlTests), a suite this small is held whole.
    expect(holding(planEvalRun(loadProjectConfig(dir, {}), dir, [], {}, {})).flat()).not.toContain('line');
    const size = byLine.requests.size;
    expect(mixed.requests.size).toBe(size);
    expect(mixed.requests.take(size).map(ran)).toEqual(byLine.requests.take(size).map(ran));
  });

  it('are told of once each as the plan loads them, not again when read back', () => {
    for (const ref of ['tests.jsonl', 'tests.yaml'] as const) {
      let told = 0;
      const dir = project(ref);
      const planned = planEvalRun(
        loadProjectConfig(dir, {}),
        dir,
        [],
        {},
        {},
        {
          onTestLoaded: () => told++,
          wholeTests: 0,
        },
      );
      expect(told).toBe(tests.length);
      planned.requests.take(planned.requests.size);
      expect(told).toBe(tests.length);
    }
  });

  it('are refused once their file changed after the plan read it', () => {
    // Over the 64 KB the reader holds at a time, so the first case reads its test from the file again.
    const padded = Array.from({ length: 400 }, (_, i) =>
      JSON.stringify({ vars: { name: `n${i} ${'x'.repeat(200)}` } }),
    );
    const dir = project('tests.jsonl', padded);
    const planned = plan(dir);
    appendFileSync(`${dir}/tests.jsonl`, `${JSON.stringify({ vars: { name: 'late' } })}\n`);
    const error = inputError(() => planned.requests.take(1));
    expect(error).toBeInstanceOf(InputError);
    expect(error.format()).toMatch(/^tests\.jsonl: tests\.jsonl changed while/);
  });
});
