import { z } from 'zod';
import { extended } from '../extended.js';
import { once } from '../once.js';
import type { GraderDef, JudgeCall } from './grader.js';
import {
  askJudge,
  caseValues,
  choiceTool,
  fillTemplate,
  judgeKeys,
  judgeOf,
  judgeReferences,
  judgeTemplate,
  readChoice,
} from './judge.js';
import { askSamples, commonestChoice } from './judge-samples.js';

/** A judge that picks one letter of a fixed menu, each letter with its score and verdict. */
export interface ChoiceScale {
  kind: string;
  describe: string;
  template: string;
  /** Letter → score in [0, 1] and whether it passes. */
  choices: Readonly<Record<string, { score: number; pass: boolean }>>;
}

/** The grader of a choice scale (closed QA's Y/N, factuality's A–E): one file per kind states only its scale. */
export const choiceGrader = (scale: ChoiceScale) => {
  const config = once(() => z.strictObject({ value: z.string().min(1).describe(scale.describe), ...judgeKeys() }));
  const letters = Object.keys(scale.choices);
  const tool = choiceTool(letters);
  const def: GraderDef<ReturnType<typeof config>> = {
    config,
    judged: true,
    gradingTemplates: ['prompt'],
    references: judgeReferences,
    create: (cfg, context) => {
      const template = judgeTemplate(cfg.prompt, scale.template, context);
      return async (input, signal) => {
        const judge = judgeOf(context, cfg.judge, scale.kind);
        const calls: JudgeCall[] = [];
        const prompt = fillTemplate(template, caseValues(input, cfg.value));
        const answers = await askSamples(cfg.samples, () =>
          askJudge(judge, cfg.judge ?? '', prompt, tool, (reply) => readChoice(reply, letters), signal, calls),
        );
        const { choice, votes } = commonestChoice(
          answers.map((a) => a.choice),
          (c) => scale.choices[c]?.score ?? 0,
        );
        const grade = scale.choices[choice] as { score: number; pass: boolean };
        const reason = answers.find((a) => a.choice === choice)?.reason ?? '';
        const shown = answers.length === 1 ? choice : `${choice} (of ${votes})`;
        return extended(grade, { reason: `${shown}: ${reason}`, judgeCalls: calls });
      };
    },
  };
  return def;
};
