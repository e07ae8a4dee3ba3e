// What a plan holds per case, counted in bytes of heap (not timed): a 100,000-test suite's plan is most of a
// run's memory, so each case's share is bounded here. The slope between two plan sizes leaves out what any
// plan holds once (loaded modules, compiled code).
import { statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProjectConfig } from '../../src/plan/config.js';
import { planEvalRun } from '../../src/plan/eval-plan.js';
import { fingerprinter } from '../../src/plan/fingerprint.js';
import { draftTests, wholeJsonlTests } from '../../src/plan/load-tests.js';
import type { PlannedCase } from '../../src/plan/matrix.js';
import type { AssertionSpec } from '../../src/plan/spec.js';
import { YamlSource } from '../../src/plan/yaml-source.js';
import { gc, heapHeld } from '../support/heap.js';
import { type TempProject, tempProject } from '../support/project.js';

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.remove();
});

/** A suite shaped like bench/suite's: each test its own vars and two assertions on per-test values. */
const suite = (n: number): TempProject => {
  const lines = Array.from({ length: n }, (_, i) => {
    const vars = {
      ref: `REF-${i}`,
      customer: `customer ${i}`,
      topic: `topic ${i % 7}`,
      body: `body of ticket ${i} `.repeat(8),
    };
    const answer = `echo: Ticket ${vars.ref} from ${vars.customer} about ${vars.topic}: ${vars.body}`;
    const assert = [
      { type: 'contains', value: vars.ref },
      { type: 'equals', value: answer },
    ];
    return JSON.stringify({ id: `t${i}`, vars, assert });
  });
  const p = tempProject({
    'proctor.toml': '',
    'tests.jsonl': `${lines.join('\n')}\n`,
    'suite.eval.yaml':
      'targets: [{ kind: echo }]\nprompts: ["Ticket {{ ref }} from {{ customer }} about {{ topic }}: {{ body }}"]\n' +
      'tests: file://tests.jsonl\n',
  });
  projects.push(p);
  return p;
};

describe('a plan in memory', () => {
  it('holds under 300 B per case of a suite whose tests each have their own vars and assertions', () => {
    // Beyond the tests a plan holds whole (the next test): each held by its line.
    const [small, large] = [2_000, 22_000].map((n) => {
      const p = suite(n);
      return heapHeld(() => planEvalRun(loadProjectConfig(p.dir, {}), p.dir, [], {}, {}, { wholeTests: 0 }));
    });
    expect(large?.held.requests.size).toBe(22_000);
    expect(small?.held.requests.size).toBe(2_000);
    const perCase = ((large?.bytes ?? 0) - (small?.bytes ?? 0)) / 20_000;
    // Measured (Node 20): ~225 B, each test held by its line's place in the file; ~1,100 B when each test was
    // held whole (its vars and assertions); ~1,220 B when each case held its own identity object, and its test's vars,
    // assertions and threshold and its eval's folder again; ~2,180 B when each key and fingerprint kept its
    // 64-character hex digest alive as a sliced string, each test's assertion list was a spread with room to grow,
    // and each test and assertion an object built with spreads.
    expect(perCase).toBeGreaterThan(0);
    expect(perCase).toBeLessThan(300);
  });

  it('holds its first tests whole, each under 1.5 KB more than by its line: ~15 MB at most, whatever its size', () => {
    const p = suite(2_000);
    const [byLine, whole] = [0, wholeJsonlTests].map((wholeTests) =>
      heapHeld(() => planEvalRun(loadProjectConfig(p.dir, {}), p.dir, [], {}, {}, { wholeTests })),
    );
    // Measured (Node 20): 590-800 B more a test (its vars and assertions as loaded, against its line's place).
    const perTest = ((whole?.bytes ?? 0) - (byLine?.bytes ?? 0)) / 2_000;
    expect(perTest).toBeGreaterThan(200);
    expect(perTest * wholeJsonlTests).toBeLessThan(15 * 2 ** 20);
  });

  it('lets go of each planned case once its request is taken', async () => {
    const p = suite(1_000);
    const config = loadProjectConfig(p.dir, {});
    // Requests of a first plan are built once, so the code building them is optimised before the cases counted
    // here are taken: code optimised while they are taken may keep the one case it was compiled on (seen: one
    // test of 300, freed by a memory-reducing collection, never with --no-opt).
    planEvalRun(config, p.dir, [], {}, {}, { wholeTests: 0 }).requests.take(1_000);
    // Its tests held by their line: a test held whole stays with the plan (a bounded few: the test before).
    const plan = planEvalRun(config, p.dir, [], {}, {}, { wholeTests: 0 });
    // A case and its test (held by its line: its vars and assertions are read back when used).
    const held = (i: number): WeakRef<object>[] => {
      const c = plan.requests.peek(i) as PlannedCase;
      return [c, c.test].map((o) => new WeakRef(o));
    };
    const taken = Array.from({ length: 300 }, (_, i) => held(i)).flat();
    const waiting = Array.from({ length: 300 }, (_, i) => held(300 + i)).flat();
    plan.requests.take(300);
    // A WeakRef holds its target until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    // The taken requests were dropped (as a runner drops a finished one): their cases are gone, the rest kept.
    expect(taken.filter((w) => w.deref() !== undefined)).toHaveLength(0);
    expect(waiting.filter((w) => w.deref() !== undefined)).toHaveLength(600);
    expect(plan.requests.size).toBe(1_000);
    expect(plan.caseCount).toBe(1_000);
  });

  it('drafts the tests of a JSONL file one at a time: the first one drafted holds a chunk of the file, not all of it', () => {
    const p = suite(12_000);
    const fileBytes = statSync(p.path('tests.jsonl')).size;
    expect(fileBytes).toBeGreaterThan(5_000_000);
    const source = YamlSource.parse('suite.eval.yaml', 'tests: file://tests.jsonl\n');
    // The reading is held half-done: what it keeps alive, not what it allocated on the way.
    const { bytes, held: drafts } = heapHeld(() => {
      const drafts = draftTests(source, 'file://tests.jsonl', p.dir, p.dir)[Symbol.iterator]();
      expect(drafts.next().value?.id).toBe('t0');
      return drafts;
    });
    // Measured (Node 20): ~1.0 MB, the 1 MB chunk being split into lines; ~22 MB (the file's text and every
    // draft with its parsed JSON) when the file was read and drafted at once.
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(fileBytes / 3);
    expect([...drafts]).toHaveLength(11_999);
  });

  it('fingerprints the own assertions of each test without keeping their JSON, a shared one the same in every print', () => {
    const assertion = (value: string): AssertionSpec => ({
      type: 'equals',
      negate: false,
      weight: 1,
      required: false,
      config: { value },
    });
    const shared = assertion('shared by every test');
    // Held by the caller, as a plan's tests hold theirs while their cases are expanded; read from JSON as a plan's
    // are, so their strings are flat (a built string flattened while it is serialised would count as held).
    const built = Array.from({ length: 20_000 }, (_, i) => assertion(`answer ${i} `.repeat(25)));
    const own = JSON.parse(JSON.stringify(built)) as AssertionSpec[];
    const { bytes, held } = heapHeld(() => {
      const fingerprints = fingerprinter('/project', {});
      const prints = own.map((a) => fingerprints.assertions([shared, a], '/project'));
      const head = (print: string): string => print.slice(0, print.indexOf('},{') + 1);
      return { fingerprints, heads: new Set(prints.map(head)).size, count: prints.length };
    });
    expect(held).toMatchObject({ heads: 1, count: 20_000 });
    // Measured (Node 20): ~1 B per assertion; ~500 B when the fingerprinter kept the JSON of every assertion it
    // met (~350 characters here), though each of the 20,000 was met once.
    const perAssertion = bytes / own.length;
    expect(perAssertion).toBeLessThan(50);
  });
  it('holds one spec for an assertion written alike in every test, and each test its own otherwise', () => {
    const lines = Array.from({ length: 1_000 }, (_, i) =>
      JSON.stringify({ vars: { q: `q${i}` }, assert: [{ type: 'is-json' }, { type: 'equals', value: `a${i}` }] }),
    );
    const p = tempProject({ 'tests.jsonl': `${lines.join('\n')}\n` });
    projects.push(p);
    const source = YamlSource.parse('suite.eval.yaml', 'tests: file://tests.jsonl\n');
    const drafts = [...draftTests(source, 'file://tests.jsonl', p.dir, p.dir)];
    expect(new Set(drafts.map((d) => d.assert[0])).size).toBe(1);
    expect(new Set(drafts.map((d) => d.assert[1])).size).toBe(1_000);
  });
});
