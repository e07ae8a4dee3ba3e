import { contains } from './contains.js';
import { containsAll } from './contains-all.js';
import { containsAny } from './contains-any.js';
import { cost } from './cost.js';
import { equals } from './equals.js';
import { factuality } from './factuality.js';
import { gEval } from './g-eval.js';
import type { GraderDef } from './grader.js';
import { icontains } from './icontains.js';
import { isJson } from './is-json.js';
import { javascript } from './javascript.js';
import { jsonSchema } from './json-schema.js';
import { latency } from './latency.js';
import { llmRubric } from './llm-rubric.js';
import { modelGradedClosedqa } from './model-graded-closedqa.js';
import { modelGradedQa } from './model-graded-qa.js';
import { regex } from './regex.js';
import { script } from './script.js';
import { similar } from './similar.js';
import { startsWith } from './starts-with.js';

/** Every grader kind, spelled once: the kind union, the YAML schema and `--help` derive from this object. */
export const graders = {
  equals,
  contains,
  icontains,
  'contains-any': containsAny,
  'contains-all': containsAll,
  regex,
  'starts-with': startsWith,
  'is-json': isJson,
  'json-schema': jsonSchema,
  javascript,
  script,
  'llm-rubric': llmRubric,
  'model-graded-closedqa': modelGradedClosedqa,
  'model-graded-qa': modelGradedQa,
  factuality,
  'g-eval': gEval,
  similar,
  cost,
  latency,
} satisfies Record<string, GraderDef>;

export type GraderKind = keyof typeof graders;

export const graderKinds = Object.keys(graders) as GraderKind[];

export const isGraderKind = (kind: string): kind is GraderKind => Object.hasOwn(graders, kind);
