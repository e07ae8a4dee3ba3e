import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ProctorError } from '../errors.js';
import type { GradeInput, GradeResult, Grader, GraderContext, GraderDef } from './grader.js';
import { messageOf, quote } from './text.js';
import { readVerdict } from './verdict.js';

type Expression = (output: string, vars: Record<string, unknown>, context: GradeInput) => unknown;
type UserFunction = (output: string, context: GradeInput) => unknown;

const filePrefix = 'file://';

/**
 * `output.length < 50` is wrapped in `return (...)`; a body with statements (`const n = ...; return n > 1`) does
 * not parse that way and is used as written. Compiling does not run the code, so validation can call this.
 */
const compileExpression = (source: string): Expression => {
  try {
    return new Function('output', 'vars', 'context', `return (\n${source}\n);`) as Expression;
  } catch {
    return new Function('output', 'vars', 'context', source) as Expression;
  }
};

const config = z.strictObject({ value: z.string().min(1) }).superRefine(({ value }, ctx) => {
  if (value.startsWith(filePrefix)) return;
  try {
    compileExpression(value);
  } catch (error) {
    ctx.addIssue({ code: 'custom', path: ['value'], message: `invalid JavaScript: ${messageOf(error)}` });
  }
});

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

const failed = (source: string, error: unknown): ProctorError =>
  error instanceof ProctorError
    ? error
    : new ProctorError('grader_error', `${source} threw: ${messageOf(error)}`, { cause: error });

/** Runs user code and reads its verdict, staying synchronous unless the code returned a promise. */
const settle = (source: string, run: () => unknown): GradeResult | Promise<GradeResult> => {
  let value: unknown;
  try {
    value = run();
  } catch (error) {
    throw failed(source, error);
  }
  if (!isThenable(value)) return readVerdict(value, source);
  return Promise.resolve(value).then(
    (resolved) => readVerdict(resolved, source),
    (error: unknown) => {
      throw failed(source, error);
    },
  );
};

const pickFunction = (mod: Record<string, unknown>, file: string): UserFunction => {
  const fallback = mod.default as Record<string, unknown> | undefined;
  const fn = [mod.default, mod.grade, fallback?.grade].find((candidate) => typeof candidate === 'function');
  if (!fn) throw new ProctorError('grader_error', `${file} exports no default or \`grade\` function`);
  return fn as UserFunction;
};

const fileGrader = (reference: string, context: GraderContext): Grader => {
  const file = path.resolve(context.baseDir, reference.slice(filePrefix.length));
  if (!existsSync(file)) throw new ProctorError('grader_error', `javascript grader file not found: ${file}`);
  const source = `javascript ${path.basename(file)}`;
  // import() is asynchronous and create() is not: start loading now, and once loaded grade without awaiting.
  let fn: UserFunction | undefined;
  const loading = import(pathToFileURL(file).href).then(
    (mod: Record<string, unknown>) => {
      fn = pickFunction(mod, file);
      return fn;
    },
    (error: unknown) => {
      throw new ProctorError('grader_error', `cannot load ${file}: ${messageOf(error)}`, { cause: error });
    },
  );
  // The failure is reported by the first grade; until then it must not count as an unhandled rejection.
  loading.catch(() => {});
  return (input) => {
    if (fn) {
      const loaded = fn;
      return settle(source, () => loaded(input.output, input));
    }
    return loading.then((loaded) => settle(source, () => loaded(input.output, input)));
  };
};

/**
 * `value` is an expression over `output`, `vars` and `context` (the whole GradeInput), or `file://path.js` whose
 * default or `grade` export is `(output, context) => boolean | number | {pass, score, reason}`, maybe async.
 */
export const javascript: GraderDef<typeof config> = {
  config,
  create: ({ value }, context) => {
    if (value.startsWith(filePrefix)) return fileGrader(value, context);
    const expression = compileExpression(value);
    const source = `javascript ${quote(value, 60)}`;
    return (input) => settle(source, () => expression(input.output, input.vars, input));
  },
  references: ({ value }) => (value.startsWith(filePrefix) ? { files: [value.slice(filePrefix.length)] } : {}),
};
