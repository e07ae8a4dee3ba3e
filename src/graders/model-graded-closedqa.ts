import { choiceGrader } from './choice-grader.js';
import { dataNotice } from './judge.js';

/** Does the output meet a yes/no criterion? OpenAI's closed-QA judge: Y passes, N fails. */
export const modelGradedClosedqa = choiceGrader({
  kind: 'model-graded-closedqa',
  describe: 'The criterion the output must meet',
  template: `You are assessing a submitted answer against a criterion. ${dataNotice}

<input>{{ input }}</input>
<output>{{ output }}</output>
<criterion>{{ criteria }}</criterion>

Does the output meet the criterion? Reason step by step, then end with a line "ANSWER: Y" or "ANSWER: N".`,
  choices: { Y: { score: 1, pass: true }, N: { score: 0, pass: false } },
});
