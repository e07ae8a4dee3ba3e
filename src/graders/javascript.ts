import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ProctorError } from '../errors.js';
import { once } from '../once.js';
import type { GradeResult, GraderDef } from './grader.js';
import { type JsJob, type JsReply, jsWorkers } from './js-workers.js';
import { messageOf, quote } from './text.js';
import { readVerdict } from './verdict.js';

const filePrefix = 'file://';
const params = ['output', 'vars', 'context'];

/**
 * The function body a worker compiles: `output.length < 50` becomes `return (...)`; a body with statements
 * (`const n = ...; return n > 1`) does not parse that way and is used as written. Compiling does not run the
 * code, so validation can call this; it throws the syntax error of a value that is neither.
 */
const expressionBody = (source: string): string => {
  const wrapped = `return (\n${source}\n);`;
  try {
    new Function(...params, wrapped);
    return wrapped;
  } catch {
    new Function(...params, source);
    return source;
  }
};

const config = once(() =>
  z
    .strictObject({
      value: z.string().min(1),
      /** User code runs in a worker thread, ended when this passes (or the case's own timeout_s comes first). */
      timeout_s: z.number().positive().default(60),
    })
    .superRefine(({ value }, ctx) => {
      if (value.startsWith(filePrefix)) return;
      try {
        expressionBody(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['value'], message: `invalid JavaScript: ${messageOf(error)}` });
      }
    }),
);

const failure = (reply: Extract<JsReply, { ok: false }>, source: string, code: string): ProctorError => {
  if (reply.stage === 'load') return new ProctorError('grader_error', `cannot load ${code}: ${reply.message}`);
  if (reply.stage === 'export')
    return new ProctorError('grader_error', `${code} exports no default or \`grade\` function`);
  return new ProctorError('grader_error', `${source} threw: ${reply.message}`);
};

/**
 * `value` is an expression over `output`, `vars` and `context` (the whole GradeInput), or `file://path.js` whose
 * default or `grade` export is `(output, context) => boolean | number | {pass, score, reason}`, maybe async.
 * It runs in a worker thread (see js-workers.ts): a grader that never returns is a grader_error, never a hang.
 */
export const javascript: GraderDef<ReturnType<typeof config>> = {
  config,
  create: ({ value, timeout_s }, context) => {
    let kind: JsJob['kind'];
    let code: string;
    let source: string;
    if (value.startsWith(filePrefix)) {
      kind = 'file';
      code = path.resolve(context.baseDir, value.slice(filePrefix.length));
      if (!existsSync(code)) throw new ProctorError('grader_error', `javascript grader file not found: ${code}`);
      source = `javascript ${path.basename(code)}`;
    } else {
      kind = 'body';
      code = expressionBody(value);
      source = `javascript ${quote(value, 60)}`;
    }
    return async (input, signal): Promise<GradeResult> => {
      const reply = await jsWorkers().run({ kind, code, input }, source, timeout_s, signal);
      if (!reply.ok) throw failure(reply, source, code);
      return readVerdict(reply.value, source);
    };
  },
  references: ({ value }) => (value.startsWith(filePrefix) ? { files: [value.slice(filePrefix.length)] } : {}),
};
