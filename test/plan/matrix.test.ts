// Expanding the matrix from the prints each test left as it was loaded: the same keys and fingerprints as from the
// test read back, and no JSONL line read again to get them. Its JSONL tests are all held by their line (wholeTests: 0).
import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CaseSubmitOptions, caseRequest } from '../../src/plan/compile-task.js';
import { loadProjectConfig } from '../../src/plan/config.js';
import { fingerprinter } from '../../src/plan/fingerprint.js';
import { loadEvalPaths } from '../../src/plan/load-eval.js';
import { expandMatrix, LoadedPrints, type PlannedCase } from '../../src/plan/matrix.js';
import { inputError, tempProject } from './temp-project.js';

const lines = [
  { id: 'a', vars: { name: 'Ada' }, assert: [{ type: 'contains', value: '{{ name }}' }] },
  { id: 'b', vars: { name: 'Bo' }, assert: [{ type: 'llm-rubric', value: 'greets {{ name }}' }] },
  { vars: { name: 'Cy' }, threshold: 0.5, before: [{ id: 'b', type: 'snapshot' }] },
  { id: 'd', vars: { name: 'Dee' }, assert: [{ type: 'not-equals', value: 'x', id: 'ne', weight: 2 }], repeat: 2 },
  { id: 'e', vars: { name: 'Eve' }, assert: [{ type: 'javascript', value: 'file://check.js' }] },
];

const evalFile = (prompt: string, judged = true): string => `
targets: [{ kind: echo }, { kind: echo, label: loud, prefix: "!" }]
${judged ? 'judges: { grader: { kind: echo } }\nevaluate_options: { judge: grader }' : ''}
prompts: ["${prompt}", "Greet {{ name }}"]
default_test:
  vars: { lang: en }
  assert: [{ type: is-json, weight: 0 }]
tests: file://tests.jsonl
`;

const project = (tests: readonly object[], judged = true): string =>
  tempProject({
    'proctor.toml': '',
    'suite.eval.yaml': evalFile('Say hi to {{ name }} in {{ lang }}', judged),
    'tests.jsonl': `${tests.map((t) => JSON.stringify(t)).join('\n')}\n`,
    'check.js': 'export default () => true;\n',
  });

/** The evals of `dir` loaded with their tests' prints kept, and those prints. */
const loadKept = (dir: string) => {
  const fingerprints = fingerprinter(dir, {});
  const loaded = new LoadedPrints(fingerprints);
  const evals = loadEvalPaths([dir], loadProjectConfig(dir, {}), {}, { prints: loaded, wholeTests: 0 });
  return { evals, fingerprints, loaded };
};

const kept = (dir: string): PlannedCase[] => {
  const { evals, fingerprints, loaded } = loadKept(dir);
  return expandMatrix(evals, fingerprints, { loaded });
};

/** The evals of `dir` expanded with no print worked out until a case is asked for its own. */
const whenAsked = (dir: string) => {
  const fingerprints = fingerprinter(dir, {});
  const loaded = new LoadedPrints(fingerprints, true);
  const evals = loadEvalPaths([dir], loadProjectConfig(dir, {}), {}, { prints: loaded, wholeTests: 0 });
  return { cases: expandMatrix(evals, fingerprints, { loaded }), fingerprints };
};

/** Every test read back from its line to be printed, as the matrix was expanded before prints were kept. */
const readBack = (dir: string): PlannedCase[] =>
  expandMatrix(loadEvalPaths([dir], loadProjectConfig(dir, {}), {}, { wholeTests: 0 }), fingerprinter(dir, {}));

const prints = (cases: readonly PlannedCase[]) => cases.map((c) => [c.key, c.fingerprint]);

describe('expandMatrix with the prints kept as tests were loaded', () => {
  it('gives every case the key and fingerprint its test read back gives: judged, steps, repeat, file graders', () => {
    const dir = project(lines);
    const cases = kept(dir);
    // 6 samples (d twice) × 2 prompts × 2 targets.
    expect(cases).toHaveLength(24);
    expect(prints(cases)).toEqual(prints(readBack(dir)));
  });

  it('or worked out when a case is asked for it: the same fingerprints, and the graders’ files hashed by the plan', () => {
    const dir = project(lines);
    const { cases, fingerprints } = whenAsked(dir);
    // Hashed as the tests loaded, before any case was asked for its fingerprint.
    expect(Object.keys(fingerprints.projectFiles())).toEqual(['check.js']);
    expect(cases).toHaveLength(24);
    expect(prints(cases)).toEqual(prints(kept(dir)));
  });

  it('and the same worked out as a case’s request is built, from the test and prompt it renders', () => {
    const dir = project(lines);
    const options: CaseSubmitOptions = {
      groupId: 'g',
      cassette: undefined,
      bundle: 'results/g',
      root: dir,
      attempt: 1,
      retries: 0,
      timeoutS: undefined,
      limits: [],
      projectFiles: {},
    };
    const requested = whenAsked(dir).cases.map((c) => [c.key, caseRequest(c, options).case?.fingerprint]);
    expect(requested).toEqual(prints(kept(dir)));
  });

  it('reads no JSONL line back: the file changed after loading still expands, and its requests refuse it', () => {
    const dir = project(
      lines.filter((t) => t.id !== 'b'),
      false,
    );
    const { evals, fingerprints, loaded } = loadKept(dir);
    appendFileSync(path.join(dir, 'tests.jsonl'), `${JSON.stringify({ vars: { name: 'late' } })}\n`);
    const cases = expandMatrix(evals, fingerprints, { loaded });
    expect(cases).toHaveLength(20);
    // The prompt is rendered again from the test's line when its request is built: a changed file is refused there.
    expect(inputError(() => cases[0]?.rendered()).message).toMatch(/tests\.jsonl changed while/);
  });

  it('a judged test is printed once every test is loaded, with its eval’s judges, and read back for it', () => {
    const dir = project(lines);
    const { evals, fingerprints, loaded } = loadKept(dir);
    appendFileSync(path.join(dir, 'tests.jsonl'), '\n');
    expect(inputError(() => expandMatrix(evals, fingerprints, { loaded })).message).toMatch(/changed while/);
  });

  it('are made anew by each plan: a changed prompt or grader changes the fingerprints it gives', () => {
    const dir = project(lines);
    const before = prints(kept(dir));
    writeFileSync(path.join(dir, 'suite.eval.yaml'), evalFile('Say hello to {{ name }} in {{ lang }}'));
    const after = prints(kept(dir));
    expect(after).toEqual(prints(readBack(dir)));
    // The keys stay; the cases of the changed prompt (the first of each test) get new fingerprints, the rest keep theirs.
    expect(after.map(([key]) => key)).toEqual(before.map(([key]) => key));
    const changed = after.filter(([, f], i) => f !== before[i]?.[1]).length;
    expect(changed).toBe(12);
    writeFileSync(
      path.join(dir, 'tests.jsonl'),
      `${lines.map((t) => JSON.stringify(t.id === 'a' ? { ...t, assert: [{ type: 'contains', value: 'Ada!' }] } : t)).join('\n')}\n`,
    );
    const regraded = prints(kept(dir));
    expect(regraded).toEqual(prints(readBack(dir)));
    expect(regraded.filter(([, f], i) => f !== after[i]?.[1])).toHaveLength(4);
  });
});
