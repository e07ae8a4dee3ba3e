import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isGraderKind } from '../../graders/registry.js';
import type { Json, JsonObject } from '../../records.js';
import { isRecord } from '../../records.js';
import { existingFile, isFileRef } from '../files.js';
import type { Path, Source } from '../source.js';
import { toLiquid } from './nunjucks.js';
import { pythonAssertion } from './python-assertion.js';
import { checkKeys } from './refuse.js';

/** promptfoo's names for Proctor graders, where they differ. */
const aliases: Readonly<Record<string, string>> = { grade: 'llm-rubric', fn: 'javascript', eval: 'javascript' };

/** Model-graded assertions: they take the judge from `options.provider` (see judge below). */
const modelGraded = ['llm-rubric', 'model-graded-closedqa', 'factuality', 'g-eval', 'answer-relevance', 'similar'];

const splitList = (value: Json): Json =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : value;

/** `icontains-any` / `icontains-all` have no grader of their own: the same check as a JavaScript expression. */
const caseless = (mode: 'any' | 'all', values: Json): string =>
  `${JSON.stringify(splitList(values))}.${mode === 'any' ? 'some' : 'every'}((v) => String(output).toLowerCase().includes(String(v).toLowerCase()))`;

/** The value of a `file://` reference for a grader that compares text: the file's content. */
const fileValue = (source: Source, at: Path, ref: string, dir: string): Json => {
  const file = existingFile(source, at, ref.slice('file://'.length), dir);
  const text = readFileSync(file, 'utf8');
  const ext = path.extname(file).toLowerCase();
  if (ext === '.json') return JSON.parse(text) as Json;
  if (ext === '.yaml' || ext === '.yml') return parseYaml(text) as Json;
  return text;
};

/** What a translated assertion needs from around it. */
export interface AssertionScope {
  dir: string;
  /**
   * The judge of a model-graded assertion: its own `provider`, else `options.provider` around it, else
   * promptfoo's default grader with an OpenAI key (`openai:gpt-5` through the OpenAI settings in the environment).
   * Returns the label the translated eval declares it under (`judges:`).
   */
  judge: (at: Path, provider: unknown) => string;
}

/** One promptfoo assertion (`type`, `value`, `threshold`, `weight`, `metric`) as a native one. */
export const translateAssertion = (source: Source, at: Path, raw: unknown, scope: AssertionScope): JsonObject => {
  if (!isRecord(raw))
    throw source.fail(at, 'an assertion must be a mapping', 'write `- type: contains` and `value: …`');
  checkKeys(source, at, raw, ['type', 'value', 'threshold', 'weight', 'metric', 'provider'], {
    transform: 'transform the output inside a `javascript` assertion instead',
    config: 'write the check as a `javascript` assertion',
    rubricPrompt: 'put the whole rubric into `value`',
    contextTransform: 'write the check as a `javascript` assertion',
  });
  if (typeof raw.type !== 'string')
    throw source.fail([...at, 'type'], 'an assertion needs a `type`', 'write e.g. `type: contains`');
  const negated = raw.type.startsWith('not-');
  const base = aliases[negated ? raw.type.slice(4) : raw.type] ?? (negated ? raw.type.slice(4) : raw.type);
  const not = negated ? 'not-' : '';
  const common: JsonObject = {
    ...(raw.threshold !== undefined ? { threshold: raw.threshold as Json } : {}),
    ...(raw.weight !== undefined ? { weight: raw.weight as Json } : {}),
    ...(typeof raw.metric === 'string' ? { id: raw.metric } : {}),
  };
  if (base === 'python') {
    if (typeof raw.value !== 'string' || raw.value === '')
      throw source.fail(
        [...at, 'value'],
        'a python assertion needs its code as `value`',
        'write an expression over `output` and `context`, or file://check.py',
      );
    return { type: `${not}script`, ...pythonAssertion(source, [...at, 'type'], raw.value), ...common };
  }
  let type = `${not}${base}`;
  let value = raw.value as Json | undefined;
  if (typeof value === 'string' && isFileRef(value) && base !== 'javascript')
    value = fileValue(source, [...at, 'value'], value, scope.dir);
  if (typeof value === 'string') value = toLiquid(value);
  if (base === 'icontains-any' || base === 'icontains-all') {
    type = `${not}javascript`;
    value = caseless(base === 'icontains-any' ? 'any' : 'all', value ?? []);
  } else if (base === 'contains-any' || base === 'contains-all') value = splitList(value ?? []);
  if (raw.provider !== undefined && !modelGraded.includes(base))
    throw source.fail(
      [...at, 'provider'],
      `a ${raw.type} assertion has no judge`,
      'remove `provider:`; only model-graded assertions use it',
    );
  if (!isGraderKind(type.slice(not.length))) {
    const hint = modelGraded.includes(base)
      ? `Proctor's \`${base}\` grader is not in this build yet; write the check as a \`javascript\` assertion until it is`
      : base === 'python'
        ? 'write the check as a `javascript` assertion, or a `script` assertion (Proctor) that runs python3'
        : 'write the check as a `javascript` assertion';
    throw source.fail([...at, 'type'], `promptfoo assertion type "${raw.type}" is not supported by Proctor`, hint);
  }
  const judge = modelGraded.includes(base) ? scope.judge([...at, 'provider'], raw.provider) : undefined;
  return {
    type,
    ...(value !== undefined ? { value } : {}),
    ...common,
    ...(judge !== undefined ? { judge } : {}),
  };
};

const promptfooTypes = [
  'equals',
  'contains',
  'icontains',
  'contains-any',
  'contains-all',
  'icontains-any',
  'icontains-all',
  'regex',
  'starts-with',
  'is-json',
  'contains-json',
  'javascript',
  'python',
  'levenshtein',
  'rouge-n',
  'bleu',
  'is-sql',
  'is-xml',
  'contains-xml',
  'cost',
  'latency',
  'perplexity',
  ...modelGraded,
  ...Object.keys(aliases),
];

/**
 * A CSV `__expected` cell as promptfoo reads it: `TYPE:VALUE`, `not-TYPE:VALUE`, `TYPE(THRESHOLD):VALUE` or
 * `is-json`, and any other text an `equals`.
 */
export const expectedAssertion = (cell: string): JsonObject => {
  const match = /^(not-)?([a-z][a-z-]*)(?:\((\d*\.?\d+)\))?(?::([\s\S]*))?$/.exec(cell);
  const name = match?.[2];
  if (!match || name === undefined || !promptfooTypes.includes(name)) return { type: 'equals', value: cell };
  const threshold = match[3];
  const value = match[4];
  return {
    type: `${match[1] ?? ''}${name}`,
    ...(value !== undefined ? { value } : {}),
    ...(threshold !== undefined ? { threshold: Number(threshold) } : {}),
  };
};
