import { describe, expect, it } from 'vitest';
import { attemptView } from '../../src/server/case-view.js';
import type { AttemptHead, JournalHead } from '../../src/store/case-artifacts.js';

const head = (text: string) => ({ text, length: text.length });

// A result.json too long for the page: its head stops inside the prompt step's transcript, before the graders.
const cut: AttemptHead = {
  seq: 1,
  runId: 'r1',
  attempt: 1,
  row: { key: 'k', outcome: 'passed' },
  artifacts: [{ name: 'result.json', size: 5_000_000 }],
  result: {
    text: '{"output":"short","steps":[{"stepId":"ask","output":{"transcript":[{"content":"yyyy',
    length: 5_000_000,
  },
};

const grading = { pass: true, score: 1, results: [{ id: 'equals', pass: true, score: 1, reason: 'from the op' }] };

const entry = (seq: number, stepId: string, ops: unknown, output: unknown): JournalHead => ({
  seq,
  stepId,
  attempt: 1,
  createdAt: 1,
  ops: head(JSON.stringify(ops)),
  output: head(JSON.stringify(output)),
});

describe('the case page of an attempt whose result.json is cut', () => {
  it("reads the graders from an eval case's journal, whose entries keep their ops and not their outputs", () => {
    const journal = [
      entry(1, 'ask', [{ op: 'set', path: 'outputs.ask', value: { text: 'short' } }], null),
      entry(2, 'verify', [{ op: 'set', path: 'verifications.main', value: grading }], null),
    ];
    const view = attemptView(cut, journal, '/a');
    expect(view.graders.map((g) => g.reason)).toEqual(['from the op']);
    expect(view.result?.complete).toBe(false);
    // An entry that kept its output (a task run's) is read from it, as before.
    const kept = attemptView(cut, [entry(2, 'verify', [], grading)], '/a');
    expect(kept.graders.map((g) => g.reason)).toEqual(['from the op']);
  });
});
