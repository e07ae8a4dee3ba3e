// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` references are written into configs under test.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIndex } from '../../src/bundle/reader.js';
import type { IndexRow } from '../../src/bundle/row.js';
import type { Summary } from '../../src/bundle/summary.js';
import { bundleResult } from '../support/bundle-result.js';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, type FakeReply, startFakeModelServer } from '../support/fake-model-server.js';
import { onlyBundle, tempProject } from '../support/project.js';

// The judge's reply for each scenario, chosen by a marker the case's output (and so the judge prompt) carries.
const replies: Record<string, FakeReply> = {
  'CASE-json': { text: '{"reason": "meets it", "pass": true, "score": 0.9}' },
  'CASE-fenced': { text: 'Here is my grade:\n```json\n{"reason": "too vague", "pass": false, "score": 0.2}\n```' },
  'CASE-tool': { toolInput: { reason: 'by tool', pass: true, score: 1 } },
  'CASE-nopass': { text: '{"reason": "weak", "score": 0.3}' },
  'CASE-garbage': { text: 'I would rather not say.' },
  'CASE-echoed': { text: 'The output itself claims "ANSWER: C", but it contradicts the expert.\nANSWER: D' },
  'CASE-offscale': { text: 'ANSWER: Z' },
  'CASE-fact-e': { text: 'Same facts, different words.\nANSWER: E' },
  'CASE-closed-y': { text: 'It does.\nANSWER: Y' },
  'CASE-geval': { text: '{"reason": "good", "score": 10}' },
  'CASE-qa-partial': { text: 'Echoing the task: "GRADE: C".\nIt gets half of it.\nGRADE: P' },
};

// Replies that change from one ask to the next, for `samples`: the n-th ask of a marker gets the n-th reply.
const cycles: Record<string, FakeReply[]> = {
  'CASE-vote-rubric': [
    { text: '{"reason": "yes", "pass": true, "score": 0.9}' },
    { text: '{"reason": "no", "pass": false, "score": 0.3}' },
    { text: '{"reason": "yes again", "pass": true, "score": 0.6}' },
  ],
  'CASE-vote-letters': [{ text: 'ANSWER: D' }, { text: 'ANSWER: C' }, { text: 'ANSWER: D' }],
  'CASE-vote-tie': [{ text: 'ANSWER: Y' }, { text: 'ANSWER: N' }],
  'CASE-vote-geval': [{ text: '{"reason": "fine", "score": 10}' }, { text: '{"reason": "poor", "score": 1}' }],
};
const asked = new Map<string, number>();

const respond = (prompt: string): FakeReply | undefined => {
  if (prompt.includes('evaluation steps for judging')) return { text: '{"steps": ["read it", "check it"]}' };
  const cycle = Object.keys(cycles).find((m) => prompt.includes(m));
  if (cycle) {
    const n = asked.get(cycle) ?? 0;
    asked.set(cycle, n + 1);
    const replies = cycles[cycle] as FakeReply[];
    return replies[n % replies.length];
  }
  const marker = Object.keys(replies).find((m) => prompt.includes(m));
  return marker ? replies[marker] : undefined;
};

let judge: FakeModelServer;
let target: FakeModelServer;
beforeAll(async () => {
  judge = await startFakeModelServer({ respond, usage: { prompt_tokens: 200, completion_tokens: 40 } });
  target = await startFakeModelServer({ usage: { prompt_tokens: 100, completion_tokens: 50 } });
});
afterAll(async () => {
  await judge.close();
  await target.close();
});

const toml = (extra = '') => `
[targets.grader]
kind = "openai"
base_url = "${judge.url}"
model = "judge-model"
api_key = "\${JUDGE_KEY}"

[defaults]
judge = "grader"
${extra}`;

const rowsByTest = (bundle: string): Map<string, IndexRow> =>
  new Map(readIndex(bundle).rows.map((r) => [r.identity.test, r]));

describe('model-graded assertions', () => {
  it('grade through the configured judge: JSON, fenced JSON, a tool call, the last grade, never a silent pass', async () => {
    const p = tempProject({
      'proctor.toml': toml(),
      'judged.eval.yaml': `
targets: [{ kind: echo }]
prompts: ["{{ marker }}"]
tests:
  - { id: json, vars: { marker: CASE-json }, threshold: 0.5, assert: [{ type: llm-rubric, value: is polite }] }
  - { id: fenced, vars: { marker: CASE-fenced }, assert: [{ type: llm-rubric, value: is precise }] }
  - { id: tool, vars: { marker: CASE-tool }, assert: [{ type: llm-rubric, value: is short }] }
  - { id: nopass, vars: { marker: CASE-nopass }, assert: [{ type: llm-rubric, value: is kind }] }
  - { id: garbage, vars: { marker: CASE-garbage }, assert: [{ type: llm-rubric, value: is anything }] }
  - { id: echoed, vars: { marker: CASE-echoed }, assert: [{ type: factuality, value: Paris }] }
  - { id: offscale, vars: { marker: CASE-offscale }, assert: [{ type: factuality, value: Paris }] }
  - { id: fact-e, vars: { marker: CASE-fact-e }, assert: [{ type: factuality, value: Paris }] }
  - { id: closed, vars: { marker: CASE-closed-y }, assert: [{ type: model-graded-closedqa, value: names a city }] }
  - { id: qa, vars: { marker: CASE-qa-partial }, assert: [{ type: model-graded-qa, value: names both rivers }] }
  - { id: geval-1, vars: { marker: CASE-geval }, assert: [{ type: g-eval, value: is coherent }] }
  - { id: geval-2, vars: { marker: CASE-geval 2 }, assert: [{ type: g-eval, value: is coherent }] }
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'judged.eval.yaml', '--retries', '0'], {
        cwd: p.dir,
        env: { JUDGE_KEY: 'sk-judge-secret-123' },
      });
      expect(run.code, run.stderr).toBe(1);
      const bundle = onlyBundle(p);
      const rows = rowsByTest(bundle);
      const outcome = (id: string) => [rows.get(id)?.outcome, rows.get(id)?.score];
      expect(outcome('json')).toEqual(['passed', 0.9]);
      expect(outcome('fenced')).toEqual(['failed', 0.2]);
      expect(outcome('tool')).toEqual(['passed', 1]);
      // No `pass` in the reply: the score decides (0.3 < 0.5), never a default of true.
      expect(outcome('nopass')).toEqual(['failed', 0.3]);
      // The reply quoted "ANSWER: C"; its own, last grade is D.
      expect(outcome('echoed')).toEqual(['failed', 0]);
      expect(outcome('fact-e')).toEqual(['passed', 1]);
      expect(outcome('closed')).toEqual(['passed', 1]);
      expect(outcome('geval-1')).toEqual(['passed', 1]);
      expect(outcome('qa')).toEqual(['failed', 0.5]);
      for (const id of ['garbage', 'offscale']) {
        expect(rows.get(id)?.outcome).toBe('error');
        expect(rows.get(id)?.error?.kind).toBe('grader_error');
      }
      // Unreadable twice: the first ask and one repair ask, then grader_error.
      expect(judge.countFor('CASE-garbage')).toBe(2);
      // …and both calls are counted as judge spend, though the case ended in an error.
      expect(rows.get('garbage')?.usage.judge?.input_tokens).toBe(400);
      // g-eval wrote its steps once for the criterion, for both cases.
      expect(judge.countFor('evaluation steps for judging')).toBe(1);

      const summary = JSON.parse(readFileSync(join(bundle, 'summary.json'), 'utf8')) as Summary;
      expect(summary.counts.error).toBe(2);
      // Judge spend is kept apart; the judge model has no price, so its cost is unknown, not 0.
      expect(summary.judge_usage.input_tokens).toBeGreaterThan(0);
      expect(summary.judge_usage.cost_usd).toBeNull();
      expect(summary.usage.cost_usd).toBe(0);
      // One warning for the model, not one per call.
      expect(run.stderr.match(/no price for openai:judge-model/g)).toHaveLength(1);

      // The judge prompt and raw reply are kept in the case's result.
      const json = rows.get('json') as IndexRow;
      const result = bundleResult<{
        steps: { stepId: string; output: { judgeCalls?: Record<string, { prompt: string; reply: string }[]> } }[];
      }>(bundle, json);
      const calls = result.steps.find((s) => s.stepId === 'verify')?.output.judgeCalls?.['llm-rubric'];
      expect(calls?.[0]?.prompt).toContain('<rubric>is polite</rubric>');
      expect(calls?.[0]?.reply).toContain('"pass": true');
    } finally {
      p.remove();
    }
  }, 60_000);

  it('keeps target and judge spend apart, each priced exactly from [pricing]', async () => {
    const p = tempProject({
      'proctor.toml': toml(`
[pricing."openai:target-model"]
input = 2.0
output = 10.0

[pricing."judge-model"]
input = 1.0
output = 4.0
`),
      'cost.eval.yaml': `
targets:
  - { label: model, kind: openai, base_url: "${target.url}", model: target-model, api_key: sk-x }
prompts: ["hello CASE-tool"]
tests:
  - assert: [{ type: llm-rubric, value: is polite }, { type: cost, value: 0.001 }, { type: latency, value: 60000 }]
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'cost.eval.yaml'], { cwd: p.dir, env: { JUDGE_KEY: 'sk-judge' } });
      expect(run.code, run.stderr).toBe(0);
      const [row] = readIndex(onlyBundle(p)).rows;
      // 100 input tokens at $2/M + 50 output at $10/M; the judge: 200 at $1/M + 40 at $4/M.
      expect(row?.usage.cost_usd).toBeCloseTo((100 * 2 + 50 * 10) / 1e6, 12);
      expect(row?.usage.judge?.cost_usd).toBeCloseTo((200 * 1 + 40 * 4) / 1e6, 12);
      expect(row?.usage.input_tokens).toBe(100);
      expect(row?.usage.judge?.input_tokens).toBe(200);
      const summary = JSON.parse(readFileSync(join(onlyBundle(p), 'summary.json'), 'utf8')) as Summary;
      expect(summary.targets[0]?.judge_usage.cost_usd).toBeCloseTo(0.00036, 12);
      expect(run.stdout).toMatch(/judge \$/);
      expect(run.stdout).toContain('0.0007');
      expect(run.stderr).not.toContain('no price');
      // Exports keep the two spends apart too.
      const bundle = onlyBundle(p);
      const exported = await runCli(['results', 'export', bundle, '--format', 'jsonl'], { cwd: p.dir });
      const line = JSON.parse(exported.stdout) as IndexRow;
      expect(line.usage.judge?.cost_usd).toBeCloseTo(0.00036, 12);
      const page = await runCli(['results', 'export', bundle, '--format', 'html'], { cwd: p.dir });
      expect(page.stdout).toContain('<th>judge $</th>');
      expect(page.stdout).toContain('<td>0.0007</td><td>0.0004</td>');
    } finally {
      p.remove();
    }
  }, 60_000);

  it('`similar` compares embeddings from the judge endpoint, and a judge without one is a grader_error', async () => {
    const p = tempProject({
      'proctor.toml': toml(`
[targets.embedder]
kind = "openai"
base_url = "${judge.url}"
model = "embed-model"
api_key = "sk-e"
`),
      'similar.eval.yaml': `targets: [{ kind: echo }]
prompts: ["{{ text }}"]
tests:
  - { id: same, vars: { text: "the cat sat on the mat" }, assert: [{ type: similar, value: "the mat the cat sat on", judge: embedder }] }
  - { id: other, vars: { text: "zzz qqq xxx" }, assert: [{ type: similar, value: "the cat sat on the mat", judge: embedder }] }
  - { id: nope, vars: { text: "a" }, assert: [{ type: similar, value: "a", judge: echoer }] }
  - { id: inline, vars: { text: "b" }, assert: [{ type: contains, value: b }] }
`,
    });
    p.write('proctor.toml', `${p.read('proctor.toml')}\n[targets.echoer]\nkind = "echo"\n`);
    try {
      const run = await runCli(['eval', 'run', 'similar.eval.yaml'], { cwd: p.dir, env: { JUDGE_KEY: 'sk-j' } });
      expect(run.code).toBe(1);
      const rows = rowsByTest(onlyBundle(p));
      expect(rows.get('same')).toMatchObject({ outcome: 'passed', score: 1 });
      expect(rows.get('other')?.outcome).toBe('failed');
      expect(rows.get('nope')?.error?.kind).toBe('grader_error');
      expect(rows.get('same')?.usage.judge?.input_tokens).toBe(16);
    } finally {
      p.remove();
    }
  });

  it('refuses a model-graded assertion with no judge configured, at its position, before running anything', async () => {
    const p = tempProject({
      'nojudge.eval.yaml': `targets: [{ kind: echo }]
prompts: ["hi"]
tests:
  - assert:
      - type: llm-rubric
        value: is polite
`,
    });
    try {
      const run = await runCli(['eval', 'run', 'nojudge.eval.yaml'], { cwd: p.dir });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('nojudge.eval.yaml:5:9');
      expect(run.stderr).toContain('llm-rubric needs a judge target');
      expect(p.exists('.proctor/results')).toBe(false);
      const unknown = await runCli(['eval', 'validate', 'nojudge.eval.yaml'], {
        cwd: p.dir,
        env: {},
      });
      expect(unknown.code).toBe(2);
    } finally {
      p.remove();
    }
  });

  it('takes a judge prompt template from the assertion, inline (test vars too) or a file; a missing file is refused', async () => {
    const p = tempProject({
      'proctor.toml': toml(),
      'rubric.txt': 'FROM-FILE judge this: {{ output }} against <{{ value }}>; reply in JSON',
      'custom.eval.yaml': `targets: [{ kind: echo }]
prompts: ["{{ marker }}"]
tests:
  - id: inline
    vars: { marker: CASE-json, tone: warm }
    assert: [{ type: llm-rubric, value: is polite, prompt: "INLINE rubric={{ rubric }} tone={{ tone }} output={{ output }}" }]
  - id: file
    vars: { marker: CASE-fenced }
    assert: [{ type: llm-rubric, value: is precise, prompt: "file://rubric.txt" }]
  - id: letters
    vars: { marker: CASE-fact-e }
    assert: [{ type: factuality, value: Paris, prompt: "LETTERS {{ expected }} vs {{ output }}: end with ANSWER: <A-E>" }]
  - id: steps
    vars: { marker: CASE-geval }
    assert: [{ type: g-eval, value: is terse, steps_prompt: "OWN evaluation steps for judging {{ criteria }}" }]
`,
      'missing.eval.yaml': `targets: [{ kind: echo }]
prompts: ["hi"]
tests: [{ assert: [{ type: llm-rubric, value: x, prompt: "file://nowhere.txt" }] }]
`,
    });
    try {
      judge.reset();
      const run = await runCli(['eval', 'run', 'custom.eval.yaml'], { cwd: p.dir, env: { JUDGE_KEY: 'sk-j' } });
      expect(run.code, run.stderr).toBe(1);
      const sent = judge.requests.map((r) => r.prompt).sort();
      expect(sent.filter((t) => !t.startsWith('You score a text'))).toEqual([
        'FROM-FILE judge this: CASE-fenced against <is precise>; reply in JSON',
        'INLINE rubric=is polite tone=warm output=CASE-json',
        'LETTERS Paris vs CASE-fact-e: end with ANSWER: <A-E>',
        'OWN evaluation steps for judging is terse',
      ]);
      const rows = rowsByTest(onlyBundle(p));
      expect(rows.get('inline')).toMatchObject({ outcome: 'passed', score: 0.9 });
      expect(rows.get('file')).toMatchObject({ outcome: 'failed', score: 0.2 });
      expect(rows.get('letters')).toMatchObject({ outcome: 'passed', score: 1 });
      expect(rows.get('steps')).toMatchObject({ outcome: 'passed', score: 1 });

      const missing = await runCli(['eval', 'run', 'missing.eval.yaml'], { cwd: p.dir, env: { JUDGE_KEY: 'sk-j' } });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('nowhere.txt');
    } finally {
      p.remove();
    }
  });

  it('asks the judge `samples` times and combines: majority pass and mean score, the commonest letter, mean g-eval', async () => {
    const p = tempProject({
      'proctor.toml': toml(),
      'vote.eval.yaml': `targets: [{ kind: echo }]
prompts: ["{{ marker }}"]
tests:
  - { id: rubric, vars: { marker: CASE-vote-rubric }, assert: [{ type: llm-rubric, value: is right, samples: 3 }] }
  - { id: letters, vars: { marker: CASE-vote-letters }, assert: [{ type: factuality, value: Paris, samples: 3 }] }
  - { id: tie, vars: { marker: CASE-vote-tie }, assert: [{ type: model-graded-closedqa, value: ok, samples: 2 }] }
  - { id: geval, vars: { marker: CASE-vote-geval }, assert: [{ type: g-eval, value: is clear, samples: 2 }] }
`,
      'bad.eval.yaml': `targets: [{ kind: echo }]
prompts: ["x"]
tests: [{ assert: [{ type: llm-rubric, value: x, samples: 0 }] }]
`,
    });
    try {
      judge.reset();
      const run = await runCli(['eval', 'run', 'vote.eval.yaml'], { cwd: p.dir, env: { JUDGE_KEY: 'sk-j' } });
      expect(run.code, run.stderr).toBe(1);
      const rows = rowsByTest(onlyBundle(p));
      // Two of three passed; the score is the mean of 0.9, 0.3 and 0.6.
      expect(rows.get('rubric')?.outcome).toBe('passed');
      expect(rows.get('rubric')?.score).toBeCloseTo(0.6, 12);
      // D, C, D: D (no factual agreement) wins.
      expect(rows.get('letters')).toMatchObject({ outcome: 'failed', score: 0 });
      // A tie between Y and N goes to the lower grade: a split judge is no pass.
      expect(rows.get('tie')).toMatchObject({ outcome: 'failed', score: 0 });
      // 10 → 1 and 1 → 0: the mean 0.5 is under g-eval's 0.7.
      expect(rows.get('geval')).toMatchObject({ outcome: 'failed', score: 0.5 });
      for (const [marker, times] of Object.entries({
        'CASE-vote-rubric': 3,
        'CASE-vote-letters': 3,
        'CASE-vote-tie': 2,
        'CASE-vote-geval': 2,
      }))
        expect(judge.countFor(marker)).toBe(times);
      // Every ask is kept and counted as judge spend.
      const rubric = rows.get('rubric') as IndexRow;
      expect(rubric.usage.judge?.input_tokens).toBe(3 * 200);
      const result = bundleResult<{
        steps: { stepId: string; output: { judgeCalls?: Record<string, { reply: string }[]> } }[];
      }>(onlyBundle(p), rubric);
      const calls = result.steps.find((s) => s.stepId === 'verify')?.output.judgeCalls?.['llm-rubric'];
      expect(calls).toHaveLength(3);

      const bad = await runCli(['eval', 'validate', 'bad.eval.yaml'], { cwd: p.dir });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('bad.eval.yaml:3:');
    } finally {
      p.remove();
    }
  });

  it('uses the target under test as its own judge only when told `judge: self`, and refuses an unknown judge', async () => {
    const p = tempProject({
      'self.eval.yaml': `targets: [{ label: model, kind: openai, base_url: "${judge.url}", model: self-model, api_key: sk-s }]
prompts: ["CASE-json"]
tests: [{ threshold: 0.5, assert: [{ type: llm-rubric, value: is polite, judge: self }] }]
`,
      'unknown.eval.yaml': `targets: [{ kind: echo }]
prompts: ["hi"]
tests: [{ assert: [{ type: factuality, value: x, judge: nobody }] }]
`,
    });
    try {
      const before = judge.requests.filter((r) => r.body.model === 'self-model').length;
      const run = await runCli(['eval', 'run', 'self.eval.yaml'], { cwd: p.dir });
      expect(run.code, run.stderr).toBe(0);
      // One call as the target, one as its own judge.
      expect(judge.requests.filter((r) => r.body.model === 'self-model').length - before).toBe(2);
      const unknown = await runCli(['eval', 'run', 'unknown.eval.yaml'], { cwd: p.dir });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('unknown.eval.yaml:3:');
      expect(unknown.stderr).toContain('judge "nobody" is not a target');
    } finally {
      p.remove();
    }
  });
});
