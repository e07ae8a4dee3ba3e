import { describe, expect, it } from 'vitest';
import { attemptView } from '../../src/server/case-view.js';
import type { AttemptHead } from '../../src/store/case-artifacts.js';

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

describe('the case page of an attempt whose result.json is cut', () => {
  it('shows the graders read past the head, and what the head holds without them', () => {
    const graders = [{ id: 'equals', pass: true, score: 1, reason: 'past the head' }];
    const view = attemptView(cut, [], '/a', graders);
    expect(view.graders).toEqual(graders);
    expect(view.result?.complete).toBe(false);
    expect(view.output?.text).toBe('short');
    // None read (a result.json cut at the cap is not JSON whole): the head's own, here none.
    expect(attemptView(cut, [], '/a', []).graders).toEqual([]);
  });

  it("keeps a whole head's graders whatever was read past it", () => {
    const whole: AttemptHead = {
      ...cut,
      result: head(
        JSON.stringify({
          steps: [{ stepId: 'v', output: { results: [{ id: 'x', pass: false, reason: 'in the head' }] } }],
        }),
      ),
    };
    expect(
      attemptView(whole, [], '/a', [{ id: 'y', pass: true, score: 1, reason: 'past' }]).graders.map((g) => g.reason),
    ).toEqual(['in the head']);
  });
});

describe('the case page of a prompt step', () => {
  const view = (output: unknown) =>
    attemptView({ ...cut, result: head(JSON.stringify({ steps: [{ stepId: 'ask', output }] })) }, [], '/a').steps[0];

  it('shows the prompt and the reply as the transcript its record left out', () => {
    expect(view({ text: 'echo: hi', prompt: 'hi', process: null })?.transcript).toEqual([
      { role: 'user', content: { text: 'hi', length: 2, truncated: false }, toolCalls: null },
      { role: 'assistant', content: { text: 'echo: hi', length: 8, truncated: false }, toolCalls: null },
    ]);
  });

  it('shows a transcript the record keeps as it is', () => {
    const transcript = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    expect(view({ text: 'hello', prompt: 'hi', transcript })?.transcript.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
    ]);
  });
});
