import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProjectConfig } from '../../src/plan/config.js';
import { loadEvalFile, loadEvalPaths } from '../../src/plan/load-eval.js';
import { inputError, tempProject } from './temp-project.js';

const projectToml = '[targets.fast]\nkind = "echo"\n[targets.slow]\nkind = "echo"\ndelay_ms = 5\n';

/** Loads `evals/a.eval.yaml` of a project holding `files` plus proctor.toml. */
const load = (yaml: string, files: Record<string, string> = {}) => {
  const root = tempProject({ 'proctor.toml': projectToml, 'evals/a.eval.yaml': yaml, ...files });
  return { root, spec: loadEvalFile(path.join(root, 'evals/a.eval.yaml'), loadProjectConfig(root, {}), {}) };
};
const fails = (yaml: string, files: Record<string, string> = {}) => inputError(() => load(yaml, files));

describe('loadEvalFile', () => {
  it('loads prompts, targets, tests, default_test and options', () => {
    const { root, spec } = load(
      `
description: greetings
targets: [fast, {kind: echo, label: shout, prefix: "!", max_concurrency: 2}]
prompts:
  - "Say hi to {{ name }}"
  - {id: formal, text: "Greet {{ name }}"}
  - file://prompt.txt
default_test:
  vars: {lang: en, name: nobody}
  assert: [{type: is-json, weight: 0}]
  threshold: 0.5
tests:
  - id: ada
    vars: {name: Ada}
    assert:
      - {type: not-contains, value: bye, required: true}
  - description: second
    threshold: 1
    repeat: 3
evaluate_options: {max_concurrency: 4, repeat: 2, timeout_s: 9, retries: 0}
`,
      { 'evals/prompt.txt': 'From file {{ name }}' },
    );
    expect(spec.file).toBe(path.join(root, 'evals/a.eval.yaml'));
    expect(spec.path).toBe('evals/a.eval.yaml');
    expect(spec.description).toBe('greetings');
    expect(spec.targets.map((t) => [t.label, t.kind, t.maxConcurrency, t.config, t.baseDir])).toEqual([
      ['fast', 'echo', undefined, {}, root],
      ['shout', 'echo', 2, { prefix: '!' }, path.join(root, 'evals')],
    ]);
    expect(spec.prompts).toEqual([
      { id: 'p1', text: 'Say hi to {{ name }}' },
      { id: 'formal', text: 'Greet {{ name }}' },
      { id: 'p3', text: 'From file {{ name }}' },
    ]);
    const [ada, second] = spec.tests;
    expect(ada).toMatchObject({ id: 'ada', vars: { lang: 'en', name: 'Ada' }, threshold: 0.5, repeat: 1 });
    expect(ada?.assert).toEqual([
      { type: 'is-json', negate: false, weight: 0, required: false, config: {} },
      { type: 'contains', negate: true, weight: 1, required: true, config: { value: 'bye' } },
    ]);
    expect(ada?.where).toEqual({ file: 'evals/a.eval.yaml', line: 13, col: 5 });
    expect(second).toMatchObject({
      id: 't2',
      description: 'second',
      vars: { lang: 'en', name: 'nobody' },
      threshold: 1,
      repeat: 3,
    });
    expect(spec.options).toEqual({ maxConcurrency: 4, repeat: 2, timeoutS: 9, retries: 0 });
  });

  it("shares the spec of an assertion written like one of the last few tests' (held once), not of a different one", () => {
    const { spec } = load(`
prompts: ["hi"]
tests:
  - {vars: {n: 1}, assert: [{type: is-json}, {type: contains, value: a}]}
  - {vars: {n: 2}, assert: [{type: equals, value: a}, {type: is-json}]}
  - {vars: {n: 3}, assert: [{type: contains, value: a}, {type: contains, value: b}, {type: is-json}]}
`);
    const [first, second, third] = spec.tests.map((t) => t.assert);
    // The same check in every test, wherever it stands among a test's own.
    expect(second?.[1]).toBe(first?.[0]);
    expect(third?.[2]).toBe(first?.[0]);
    expect(third?.[0]).toBe(first?.[1]);
    // Another type with the same value, or the same type with another value, is an assertion of its own.
    expect(second?.[0]).not.toBe(first?.[1]);
    expect(third?.[1]).not.toBe(third?.[0]);
    expect(third?.map((a) => [a.type, a.config.value])).toEqual([
      ['contains', 'a'],
      ['contains', 'b'],
      ['is-json', undefined],
    ]);
  });

  it('accepts a single prompt string, defaults targets to proctor.toml, and makes one test when there are none', () => {
    const { spec } = load('prompts: hello\n');
    expect(spec.prompts).toEqual([{ id: 'p1', text: 'hello' }]);
    expect(spec.targets.map((t) => t.label)).toEqual(['fast', 'slow']);
    expect(spec.tests.map((t) => t.id)).toEqual(['t1']);
  });

  it('loads tests from CSV, JSONL and YAML files, numbering t<N> across the file', () => {
    const { spec } = load(
      'prompts: "{{ q }}"\ntests:\n  - vars: {q: inline}\n  - file://t.csv\n  - file://t.jsonl\n  - file://more.yaml\n',
      {
        'evals/t.csv': 'id,q,assert:contains,description\n,"a, b",b,first\nnamed,"say ""x""",,\n',
        'evals/t.jsonl':
          '{"vars": {"q": "j1"}}\n\n{"id": "j2", "vars": {"q": 2}, "assert": [{"type": "equals", "value": "2"}]}\n',
        'evals/more.yaml': '- vars: {q: y}\n',
      },
    );
    expect(spec.tests.map((t) => [t.id, t.vars])).toEqual([
      ['t1', { q: 'inline' }],
      ['t2', { q: 'a, b' }],
      ['named', { q: 'say "x"' }],
      ['t4', { q: 'j1' }],
      ['j2', { q: 2 }],
      ['t6', { q: 'y' }],
    ]);
    expect(spec.tests[1]).toMatchObject({
      description: 'first',
      assert: [{ type: 'contains', config: { value: 'b' } }],
    });
    expect(spec.tests[2]?.assert).toEqual([]);
    expect(spec.tests[1]?.where).toEqual({ file: 'evals/t.csv', line: 2, col: 1 });
    expect(spec.tests[4]?.where).toEqual({ file: 'evals/t.jsonl', line: 3, col: 1 });
  });

  it('accepts tests as a single file reference', () => {
    const { spec } = load('prompts: x\ntests: file://t.csv\n', { 'evals/t.csv': 'a\n1\n2\n' });
    expect(spec.tests.map((t) => t.id)).toEqual(['t1', 't2']);
  });

  it('keeps a ../ path for an eval outside the root', () => {
    const root = tempProject({ 'proj/proctor.toml': projectToml, 'other/x.eval.yaml': 'prompts: x\n' });
    const spec = loadEvalFile(path.join(root, 'other/x.eval.yaml'), loadProjectConfig(path.join(root, 'proj'), {}), {});
    expect(spec.path).toBe('../other/x.eval.yaml');
  });
});

describe('loadEvalFile errors point at the node', () => {
  it('unparsable YAML', () => {
    const error = fails('prompts: [a\ntests: {');
    expect(error.message).toMatch(/^invalid YAML/);
    expect(error.where?.file).toBe('evals/a.eval.yaml');
    expect(error.where?.line).toBeGreaterThanOrEqual(1);
  });

  it('unknown top-level and nested keys, with suggestions', () => {
    let error = fails('prompts: x\ntest:\n  - vars: {}\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 2, col: 1 });
    expect(error.hint).toContain('did you mean "tests"');
    error = fails('prompts: x\ntests:\n  - vars: {}\n    asert: []\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 4, col: 5 });
    expect(error.message).toBe('unknown key "asert" in tests[0]');
    expect(error.hint).toContain('did you mean "assert"');
    error = fails('prompts: x\nworkspaces: {}\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 2, col: 1 });
    expect(error.hint).toContain('did you mean "workspace"');
  });

  it('missing prompts', () => {
    const error = fails('tests: []\n');
    expect(error.message).toBe('missing required key "prompts"');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 1, col: 1 });
  });

  it('unknown assertion type, suggesting the nearest (negated too)', () => {
    let error = fails('prompts: x\ntests:\n  - assert:\n      - type: contians\n        value: a\n');
    expect(error.format()).toMatch(
      /^evals\/a\.eval\.yaml:4:15: unknown assertion type "contians"\n {2}fix: did you mean "contains"\? Known types: equals, contains/,
    );
    error = fails('prompts: x\ntests:\n  - assert: [{type: not-contians, value: a}]\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 3, col: 21 });
    expect(error.hint).toContain('did you mean "not-contains"');
  });

  it('bad grader config', () => {
    let error = fails('prompts: x\ntests:\n  - assert:\n      - type: contains\n        value: ""\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 5, col: 16 });
    expect(error.message).toContain('tests[0].assert[0].value');
    error = fails('prompts: x\ndefault_test:\n  assert:\n    - type: regex\n      value: a\n      flag: i\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 6, col: 7 });
    expect(error.hint).toContain('did you mean "flags"');
    error = fails('prompts: x\ntests:\n  - assert: [{type: contains, value: a, weight: -1}]\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 3, col: 49 });
  });

  it('duplicate test id, explicit and by position', () => {
    let error = fails('prompts: x\ntests:\n  - id: a\n  - id: b\n  - id: a\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 5, col: 9 });
    expect(error.message).toContain('duplicate test id "a" (first used at evals/a.eval.yaml:3)');
    error = fails('prompts: x\ntests:\n  - id: t2\n  - vars: {}\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 4, col: 5 });
    expect(error.hint).toContain('t<N>');
  });

  it('missing file:// files, for tests and prompts', () => {
    let error = fails('prompts: x\ntests:\n  - vars: {}\n  - file://nope.csv\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 4, col: 5 });
    expect(error.message).toMatch(/^file not found: file:\/\/nope\.csv/);
    error = fails('prompts:\n  - {id: a, text: file://missing.txt}\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 2, col: 19 });
  });

  it('unknown target label and kind, duplicate targets', () => {
    let error = fails('prompts: x\ntargets:\n  - fast\n  - slwo\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 4, col: 5 });
    expect(error.message).toBe('unknown target "slwo"');
    expect(error.hint).toContain('did you mean "slow"');
    error = fails('prompts: x\ntargets: [{kind: opneai}]\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 2, col: 18 });
    expect(error.hint).toContain('did you mean "openai"');
    error = fails('prompts: x\ntargets: [fast, {kind: echo}, {kind: echo}]\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 2, col: 31 });
    expect(error.message).toBe('duplicate target "echo"');
  });

  it('bad inline target config', () => {
    const error = fails('prompts: x\ntargets:\n  - kind: echo\n    delay_ms: soon\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 4, col: 15 });
    expect(error.message).toContain('targets[0].delay_ms');
  });

  it('errors inside CSV and JSONL files name those files', () => {
    let error = fails('prompts: x\ntests: file://t.csv\n', { 'evals/t.csv': 'q,assert:contians\n1,x\n' });
    expect(error.where).toEqual({ file: 'evals/t.csv', line: 2, col: 3 });
    expect(error.hint).toContain('did you mean "contains"');
    error = fails('prompts: x\ntests: file://t.csv\n', { 'evals/t.csv': 'q,r\n1,2\n3\n' });
    expect(error.where).toEqual({ file: 'evals/t.csv', line: 3, col: 1 });
    // A misspelt key, then values a plain test never has: each is left to the schema, whose error points at it.
    const jsonlCases: { jsonl: string; line: number; col: number; hint?: string }[] = [
      { jsonl: '{"vars": {}}\n{"vars": {}, "thresold": 1}\n', line: 2, col: 14, hint: 'did you mean "threshold"' },
      { jsonl: '{"vars": {}}\n{"vars": {}, "threshold": 1.5}\n', line: 2, col: 27, hint: 'at most 1' },
      { jsonl: '{"id": "", "vars": {"q": 1}}\n', line: 1, col: 8 },
      {
        jsonl: '{"vars": {"q": 1}, "assert": [{"type": "equals", "value": 1, "weight": -1}]}\n',
        line: 1,
        col: 72,
        hint: 'at least 0',
      },
    ];
    for (const { jsonl, line, col, hint } of jsonlCases) {
      error = fails('prompts: x\ntests: file://t.jsonl\n', { 'evals/t.jsonl': jsonl });
      expect(error.where).toEqual({ file: 'evals/t.jsonl', line, col });
      if (hint !== undefined) expect(error.hint).toContain(hint);
    }
  });

  it('bad threshold, bad template, duplicate prompt id', () => {
    let error = fails('prompts: x\ntests:\n  - threshold: 1.5\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 3, col: 16 });
    expect(error.hint).toContain('at most 1');
    error = fails('prompts:\n  - "{% if x %}open"\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 2, col: 5 });
    expect(error.message).toMatch(/^invalid template/);
    error = fails('prompts: [{id: a, text: x}, {id: a, text: y}]\n');
    expect(error.where).toEqual({ file: 'evals/a.eval.yaml', line: 1, col: 29 });
  });
});

describe('loadEvalPaths', () => {
  it('expands directories to sorted *.eval.yaml / *.eval.yml files, once each, skipping node_modules', () => {
    const root = tempProject({
      'proctor.toml': projectToml,
      'evals/b.eval.yml': 'prompts: b\n',
      'evals/a.eval.yaml': 'prompts: a\n',
      'evals/sub/c.eval.yaml': 'prompts: c\n',
      'evals/notes.yaml': 'not: an eval\n',
      'node_modules/x/d.eval.yaml': 'bad: [\n',
    });
    const config = loadProjectConfig(root, {});
    const specs = loadEvalPaths([root, path.join(root, 'evals/a.eval.yaml')], config, {});
    expect(specs.map((s) => s.path)).toEqual(['evals/a.eval.yaml', 'evals/b.eval.yml', 'evals/sub/c.eval.yaml']);
  });

  it('rejects a missing path and a directory without evals', () => {
    const root = tempProject({ 'proctor.toml': projectToml, 'empty/readme.md': 'x' });
    const config = loadProjectConfig(root, {});
    expect(inputError(() => loadEvalPaths([path.join(root, 'nope')], config, {})).message).toMatch(
      /^no such file or directory/,
    );
    expect(inputError(() => loadEvalPaths([path.join(root, 'empty')], config, {})).message).toMatch(
      /^no \*\.eval\.yaml files/,
    );
  });
});
