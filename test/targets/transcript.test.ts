import { describe, expect, it } from 'vitest';
import { isSingleTurn, singleTurn } from '../../src/targets/transcript.js';

describe('a single-turn transcript', () => {
  it('is one that says no more than the prompt and its reply', () => {
    expect(isSingleTurn(singleTurn('ask', 'answer'), 'ask', 'answer')).toBe(true);
  });

  it('is not one with a system prompt, more turns, tool calls or other words', () => {
    expect(isSingleTurn(singleTurn('ask', 'answer', 'be brief'), 'ask', 'answer')).toBe(false);
    expect(isSingleTurn([...singleTurn('ask', 'answer'), { role: 'user', content: 'more' }], 'ask', 'answer')).toBe(
      false,
    );
    const called = [
      { role: 'user', content: 'ask' },
      { role: 'assistant', content: 'answer', tool_calls: [] },
    ];
    expect(isSingleTurn(called as ReturnType<typeof singleTurn>, 'ask', 'answer')).toBe(false);
    expect(isSingleTurn(singleTurn('ask', '{"tool":1}'), 'ask', 'answer')).toBe(false);
    expect(isSingleTurn(singleTurn('other', 'answer'), 'ask', 'answer')).toBe(false);
  });
});
