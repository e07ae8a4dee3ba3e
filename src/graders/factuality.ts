import { choiceGrader } from './choice-grader.js';
import { dataNotice } from './judge.js';

/** Is the output factually consistent with an expert answer? The A–E scale and scores of autoevals. */
export const factuality = choiceGrader({
  kind: 'factuality',
  describe: 'The expert answer the output is compared with',
  template: `You are comparing a submitted answer to an expert answer on a given question. ${dataNotice}

<input>{{ input }}</input>
<expected>{{ value }}</expected>
<output>{{ output }}</output>

Compare the factual content of the output with the expert answer; ignore differences in style. Choose one:
(A) The output is a subset of the expert answer and is fully consistent with it.
(B) The output is a superset of the expert answer and is fully consistent with it.
(C) The output contains all the same details as the expert answer.
(D) There is a disagreement between the output and the expert answer.
(E) The answers differ, but these differences don't matter from the perspective of factuality.
Reason step by step, then end with a line "ANSWER: <letter>".`,
  choices: {
    A: { score: 0.4, pass: true },
    B: { score: 0.6, pass: true },
    C: { score: 1, pass: true },
    D: { score: 0, pass: false },
    E: { score: 1, pass: true },
  },
});
