import { z } from 'zod';
import { extended } from '../extended.js';
import { once } from '../once.js';
import type { GradeResult, GraderDef, JudgeCall } from './grader.js';
import {
  askJudge,
  caseValues,
  dataNotice,
  fillTemplate,
  judgeKeys,
  judgeOf,
  judgeReferences,
  judgeTemplate,
  lastVerdictObject,
  type Parsed,
} from './judge.js';
import { askSamples, majorityVerdict } from './judge-samples.js';

const config = once(() =>
  z.strictObject({ value: z.string().min(1).describe('The rubric the output must meet'), ...judgeKeys() }),
);

const defaultTemplate = `You grade an output against a rubric. ${dataNotice}

<input>{{ input }}</input>
<output>{{ output }}</output>
<rubric>{{ rubric }}</rubric>

Think about whether the output meets the rubric, then answer with one JSON object:
{"reason": "<why>", "pass": true or false, "score": <0.0 to 1.0>}`;

const tool = {
  name: 'submit_grade',
  description: 'Submit the grade: your reasoning, whether the output passes the rubric, and a score in [0, 1].',
  schema: {
    type: 'object',
    properties: { reason: { type: 'string' }, pass: { type: 'boolean' }, score: { type: 'number' } },
    required: ['reason', 'pass', 'score'],
    additionalProperties: false,
  },
};

// Without `pass`, the score decides at this bar (an assertion's own `threshold` replaces it).
const defaultPassScore = 0.5;

/** `{pass, score, reason}`; a missing pass is decided by the score, never assumed true; neither is no verdict. */
const parse = (reply: { text: string; toolInput?: unknown }): Parsed<GradeResult> => {
  const o = lastVerdictObject(reply, ['pass', 'score']);
  if (!o) return { ok: false, why: 'no JSON object with "pass" or "score" in the reply' };
  const { pass, score, reason } = o;
  if (pass !== undefined && typeof pass !== 'boolean') return { ok: false, why: `"pass" is ${JSON.stringify(pass)}` };
  if (score !== undefined && (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1))
    return { ok: false, why: `"score" ${JSON.stringify(score)} is not a number in [0, 1]` };
  const finalScore = typeof score === 'number' ? score : pass ? 1 : 0;
  return {
    ok: true,
    value: {
      pass: typeof pass === 'boolean' ? pass : finalScore >= defaultPassScore,
      score: finalScore,
      reason: typeof reason === 'string' && reason !== '' ? reason : 'the judge gave no reason',
    },
  };
};

/** A judge model grades the output against a rubric: `{pass, score, reason}`. */
export const llmRubric: GraderDef<ReturnType<typeof config>> = {
  config,
  judged: true,
  gradingTemplates: ['prompt'],
  references: judgeReferences,
  create: (cfg, context) => {
    const template = judgeTemplate(cfg.prompt, defaultTemplate, context);
    return async (input, signal) => {
      const judge = judgeOf(context, cfg.judge, 'llm-rubric');
      const calls: JudgeCall[] = [];
      const prompt = fillTemplate(template, caseValues(input, cfg.value));
      const verdicts = await askSamples(cfg.samples, () =>
        askJudge(judge, cfg.judge ?? '', prompt, tool, parse, signal, calls),
      );
      return extended(majorityVerdict(verdicts), { judgeCalls: calls });
    };
  },
};
