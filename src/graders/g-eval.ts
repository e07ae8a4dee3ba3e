import { z } from 'zod';
import { extended } from '../extended.js';
import { once } from '../once.js';
import type { GraderDef, JudgeCall } from './grader.js';
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
import { askSamples, meanScore } from './judge-samples.js';

const config = once(() =>
  z.strictObject({
    value: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .describe('The criteria; several are scored one by one and averaged'),
    ...judgeKeys(),
    /** The template (or file://PATH) asking for a criterion's evaluation steps: `{{ criteria }}`. */
    steps_prompt: z.string().min(1).optional(),
  }),
);

const stepsTemplate = `Write 3 to 5 concise evaluation steps for judging a text against this criterion:
<criteria>{{ criteria }}</criteria>
Answer with one JSON object: {"steps": ["…", "…"]}`;

const scoreTemplate = `You score a text against a criterion, following the evaluation steps. ${dataNotice}

<criteria>{{ criteria }}</criteria>
<steps>{{ steps }}</steps>
<input>{{ input }}</input>
<output>{{ output }}</output>

Answer with one JSON object: {"reason": "<why>", "score": <integer 1 to 10>}`;

const stepsTool = {
  name: 'submit_steps',
  description: 'Submit the evaluation steps.',
  schema: {
    type: 'object',
    properties: { steps: { type: 'array', items: { type: 'string' } } },
    required: ['steps'],
    additionalProperties: false,
  },
};

const scoreTool = {
  name: 'submit_grade',
  description: 'Submit your reasoning and the score from 1 (worst) to 10 (best).',
  schema: {
    type: 'object',
    properties: { reason: { type: 'string' }, score: { type: 'integer', minimum: 1, maximum: 10 } },
    required: ['reason', 'score'],
    additionalProperties: false,
  },
};

// promptfoo's bar for g-eval; an assertion's own `threshold` replaces it.
const passScore = 0.7;

const parseSteps = (reply: { text: string; toolInput?: unknown }): Parsed<string> => {
  const steps = lastVerdictObject(reply, ['steps'])?.steps;
  return Array.isArray(steps) && steps.length > 0 && steps.every((s) => typeof s === 'string')
    ? { ok: true, value: steps.map((s, i) => `${i + 1}. ${s}`).join('\n') }
    : { ok: false, why: 'no JSON object with a "steps" list of strings' };
};

const parseScore = (reply: { text: string; toolInput?: unknown }): Parsed<{ score: number; reason: string }> => {
  const o = lastVerdictObject(reply, ['score']);
  const score = o?.score;
  if (typeof score !== 'number' || !Number.isInteger(score) || score < 1 || score > 10)
    return { ok: false, why: `score ${JSON.stringify(score)} is not an integer from 1 to 10` };
  // 1..10 onto 0..1, as G-Eval's form-filling scale is read.
  return { ok: true, value: { score: (score - 1) / 9, reason: typeof o?.reason === 'string' ? o.reason : '' } };
};

/**
 * G-Eval: the judge writes evaluation steps for each criterion (once per criterion in this process, and the
 * call is kept with the first case that needed it), then scores the output 1–10 following them.
 */
export const gEval: GraderDef<ReturnType<typeof config>> = {
  config,
  judged: true,
  gradingTemplates: ['prompt', 'steps_prompt'],
  references: judgeReferences,
  create: (cfg, context) => {
    const criteria = typeof cfg.value === 'string' ? [cfg.value] : cfg.value;
    const template = judgeTemplate(cfg.prompt, scoreTemplate, context);
    const stepsAsk = judgeTemplate(cfg.steps_prompt, stepsTemplate, context);
    const label = cfg.judge ?? '';
    const steps = new Map<string, Promise<string>>();
    return async (input, signal) => {
      const judge = judgeOf(context, cfg.judge, 'g-eval');
      const calls: JudgeCall[] = [];
      const scores: number[] = [];
      const reasons: string[] = [];
      for (const criterion of criteria) {
        let written = steps.get(criterion);
        if (!written) {
          const prompt = fillTemplate(stepsAsk, { criteria: criterion });
          written = askJudge(judge, label, prompt, stepsTool, parseSteps, signal, calls);
          // A failed steps call must not poison later cases: they ask again.
          written.catch(() => steps.delete(criterion));
          steps.set(criterion, written);
        }
        const prompt = fillTemplate(template, extended(caseValues(input, criterion), { steps: await written }));
        const sampled = await askSamples(cfg.samples, () =>
          askJudge(judge, label, prompt, scoreTool, parseScore, signal, calls),
        );
        scores.push(meanScore(sampled.map((r) => r.score)));
        reasons.push(sampled.map((r) => r.reason).join(' | '));
      }
      const score = meanScore(scores);
      return { pass: score >= passScore, score, reason: reasons.join(' | '), judgeCalls: calls };
    };
  },
};
