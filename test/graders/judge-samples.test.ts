import { describe, expect, it } from 'vitest';
import { ProctorError } from '../../src/errors.js';
import { askSamples, commonestChoice, majorityVerdict } from '../../src/graders/judge-samples.js';
import { rejection } from '../support/rejection.js';

describe('judge samples', () => {
  it('a failed ask fails the grading only once every ask has ended, so none is left running uncounted', async () => {
    let ended = 0;
    let asked = 0;
    const ask = async (): Promise<number> => {
      const n = asked++;
      if (n === 0) {
        ended++;
        throw new ProctorError('grader_error', 'unreadable');
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      ended++;
      return n;
    };
    const error = await rejection(askSamples(3, ask));
    expect(error).toBeInstanceOf(ProctorError);
    expect(ended).toBe(3);
    expect(await askSamples(undefined, async () => 'once')).toEqual(['once']);
  });

  it('combines verdicts: a majority passes, a tie does not; the commonest letter, a tie to the lower grade', () => {
    const v = (pass: boolean, score: number) => ({ pass, score, reason: String(score) });
    expect(majorityVerdict([v(true, 1), v(false, 0)])).toMatchObject({ pass: false, score: 0.5 });
    expect(majorityVerdict([v(true, 1), v(true, 0.5), v(false, 0)])).toMatchObject({ pass: true, score: 0.5 });
    const scores: Record<string, number> = { A: 0.4, C: 1, D: 0 };
    expect(commonestChoice(['C', 'D', 'C'], (c) => scores[c] ?? 0).choice).toBe('C');
    expect(commonestChoice(['C', 'A'], (c) => scores[c] ?? 0).choice).toBe('A');
  });
});
