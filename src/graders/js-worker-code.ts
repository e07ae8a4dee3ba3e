/**
 * The code a javascript grader's worker thread runs, as text: a worker started from a file would need a `.js`
 * path, which exists in dist/ but not beside the TypeScript sources tests import. It is plain CommonJS (what an
 * `eval` worker runs) and deliberately small: it compiles each distinct function body or loads each module once,
 * calls it with one case, and answers with the raw return value; the main thread reads the verdict.
 *
 * Request: `{kind: 'body' | 'file', code, input}`, `code` a function body over (output, vars, context) or an
 * absolute module path. Reply: `{ok: true, value}` or `{ok: false, stage: 'load' | 'export' | 'threw', message}`.
 */
export const jsWorkerCode = String.raw`
const { parentPort } = require('node:worker_threads');
const { pathToFileURL } = require('node:url');

const functions = new Map();
const textOf = (error) => (error instanceof Error ? error.message : String(error));

class StageError extends Error {
  constructor(stage, message) {
    super(message);
    this.stage = stage;
  }
}

const load = async (file) => {
  let mod;
  try {
    mod = await import(pathToFileURL(file).href);
  } catch (error) {
    throw new StageError('load', textOf(error));
  }
  const fallback = mod.default;
  const fn = [mod.default, mod.grade, fallback && fallback.grade].find((f) => typeof f === 'function');
  if (!fn) throw new StageError('export', 'no default or grade function');
  return (input) => fn(input.output, input);
};

const compile = (body) => {
  const fn = new Function('output', 'vars', 'context', body);
  return (input) => fn(input.output, input.vars, input);
};

parentPort.on('message', async ({ kind, code, input }) => {
  let reply;
  try {
    const key = kind + '\0' + code;
    let fn = functions.get(key);
    if (!fn) {
      fn = kind === 'file' ? await load(code) : compile(code);
      functions.set(key, fn);
    }
    reply = { ok: true, value: await fn(input) };
  } catch (error) {
    reply = { ok: false, stage: error instanceof StageError ? error.stage : 'threw', message: textOf(error) };
  }
  try {
    parentPort.postMessage(reply);
  } catch (error) {
    parentPort.postMessage({ ok: false, stage: 'threw', message: 'returned a value that cannot be read: ' + textOf(error) });
  }
});
`;
