import { choiceGrader } from './choice-grader.js';
import { dataNotice } from './judge.js';

/** Is the output a correct answer, by a criterion? Inspect's model_graded_qa: C correct, P partial (0.5), I not. */
export const modelGradedQa = choiceGrader({
  kind: 'model-graded-qa',
  describe: 'What a correct answer must contain or do',
  template: `You are assessing a submitted answer to a question against a criterion. ${dataNotice}

<input>{{ input }}</input>
<output>{{ output }}</output>
<criterion>{{ criteria }}</criterion>

Reason step by step about whether the output meets the criterion, then end with a line "GRADE: C" (correct),
"GRADE: P" (partially correct) or "GRADE: I" (incorrect).`,
  choices: { C: { score: 1, pass: true }, P: { score: 0.5, pass: false }, I: { score: 0, pass: false } },
});
