import type { StepSpec } from '../engine/task.js';
import { gradingTemplateKeys } from '../graders/assertion.js';
import type { Json, JsonObject } from '../records.js';
import { isTemplate, renderTemplate } from '../template.js';
import type { AssertionSpec, TestSpec } from './spec.js';
import { hasTemplate } from './template-vars.js';

type Vars = Readonly<Record<string, unknown>>;

/** `value` with every template string rendered; the same object when nothing in it is a template. */
const renderJson = (value: Json, vars: Vars): Json => {
  if (typeof value === 'string') return isTemplate(value) ? renderTemplate(value, vars) : value;
  if (Array.isArray(value)) {
    const out = value.map((v) => renderJson(v, vars));
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    const out = entries.map(([k, v]) => [k, renderJson(v, vars)] as const);
    return out.some(([, v], i) => v !== entries[i]?.[1]) ? Object.fromEntries(out) : value;
  }
  return value;
};

/** The assertion with its config's templates rendered with `vars`, but for those its grader fills itself. */
export const renderAssertion = (a: AssertionSpec, vars: Vars): AssertionSpec => {
  if (!hasTemplate(a.config)) return a;
  const late = gradingTemplateKeys(a.type);
  const entries = Object.entries(a.config);
  const out = entries.map(([k, v]) => [k, late.includes(k) ? v : renderJson(v, vars)] as const);
  return out.some(([, v], i) => v !== entries[i]?.[1]) ? { ...a, config: Object.fromEntries(out) } : a;
};

const renderStep = (s: StepSpec, vars: Vars): StepSpec => {
  const config = renderJson(s.config, vars) as JsonObject;
  return config === s.config ? s : { ...s, config };
};

const same = <T>(a: readonly T[] | undefined, b: readonly T[] | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && a.every((x, i) => x === b[i]));

/**
 * The test with `{{ vars }}` rendered in its assertions' configs and its steps (commands, file names), as
 * prompts are: default_test's are shared by every test, so this runs per test, not at load. A test with no
 * template is returned as it is, keeping its fingerprint and the per-object caches that hash it.
 */
export const renderTest = (test: TestSpec): TestSpec => {
  const assert = test.assert.map((a) => renderAssertion(a, test.vars));
  const before = test.before?.map((s) => renderStep(s, test.vars));
  const after = test.after?.map((s) => renderStep(s, test.vars));
  if (same(assert, test.assert) && same(before, test.before) && same(after, test.after)) return test;
  // Field by field, not spread: a held test's fields are getters (held-test.ts), which a spread leaves out.
  return {
    id: test.id,
    ...(test.description !== undefined ? { description: test.description } : {}),
    vars: test.vars,
    assert,
    threshold: test.threshold,
    repeat: test.repeat,
    ...(test.metadata !== undefined ? { metadata: test.metadata } : {}),
    ...(test.where !== undefined ? { where: test.where } : {}),
    ...(before ? { before } : {}),
    ...(after ? { after } : {}),
  };
};
