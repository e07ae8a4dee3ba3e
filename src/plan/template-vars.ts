import { gradingTemplateKeys } from '../graders/assertion.js';
import { isTemplate, templateVariables } from '../template.js';
import type { Path, Source } from './source.js';
import type { AssertionSpec } from './spec.js';
import { nearest } from './suggest.js';

/** Every string inside `value` with its path below `at`: where templates can be. */
const stringsIn = (value: unknown, at: Path, out: [Path, string][] = []): [Path, string][] => {
  if (typeof value === 'string') out.push([at, value]);
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) stringsIn(v, [...at, i], out);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) stringsIn(v, [...at, k], out);
  return out;
};

/** Whether any string inside `value` is a template; most assertions and steps have none, and need no walk. */
export const hasTemplate = (value: unknown): boolean => {
  if (typeof value === 'string') return isTemplate(value);
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasTemplate);
  for (const key in value) if (hasTemplate((value as Record<string, unknown>)[key])) return true;
  return false;
};

/** Whose vars a template may read: any test's (a prompt, default_test), or one test's own. */
export interface KnownVars {
  names: ReadonlySet<string>;
  /** `this prompt`, `this assertion`, `this step`. */
  what: string;
  /** True when only one test's vars count (its own assertions and steps). */
  ownTest: boolean;
}

/**
 * Refuses a template (in any string of `value`) that reads a variable no test gives: rendered, it would be an
 * empty string, and an assertion comparing against '' or a command missing an argument would mis-grade
 * quietly. Also refuses a template that does not parse. Both are errors at the string's own position.
 */
export const checkTemplateVars = (source: Source, at: Path, value: unknown, known: KnownVars): void => {
  if (!hasTemplate(value)) return;
  for (const [where, text] of stringsIn(value, at)) {
    let names: string[];
    try {
      names = templateVariables(text);
    } catch (error) {
      const message = error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
      throw source.fail(
        where,
        `invalid template: ${message}`,
        'vars are written {{ name }}; tags {% … %} must be closed',
      );
    }
    const missing = names.find((n) => !known.names.has(n));
    if (missing === undefined) continue;
    const given = [...known.names];
    const guess = nearest(missing, given);
    const add = `add \`${missing}\` to the vars of ${known.ownTest ? 'this test' : 'a test'} (or default_test.vars)`;
    const hint = guess ? `did you mean {{ ${guess} }}? If not, ${add}` : add;
    throw source.fail(
      where,
      known.ownTest
        ? `{{ ${missing} }} in ${known.what} is not among the test's vars (${given.join(', ') || 'none'})`
        : `{{ ${missing} }} in ${known.what} is given by no test`,
      hint,
    );
  }
};

/** The templates of one assertion's config (at `at`) that the plan renders with the test's vars. */
export const checkAssertionTemplates = (source: Source, at: Path, a: AssertionSpec, known: KnownVars): void => {
  // A judge prompt is filled when grading, with the output and the judge's own names: not the test's to check.
  if (!hasTemplate(a.config)) return;
  const late = gradingTemplateKeys(a.type);
  const rendered = Object.fromEntries(Object.entries(a.config).filter(([k]) => !late.includes(k)));
  checkTemplateVars(source, at, rendered, known);
};

/**
 * The templates of a test (at `at`) or of default_test: its assertions' configs and its `before`/`after`
 * steps as written. A test's own may read its vars; default_test's serve every test, so any test's.
 */
export const checkTestTemplates = (
  source: Source,
  at: Path,
  test: { assert: readonly AssertionSpec[]; before?: unknown; after?: unknown },
  names: ReadonlySet<string>,
  ownTest: boolean,
): void => {
  const assertions = { names, what: 'this assertion', ownTest };
  // Every test of a suite comes here as it loads, and most assertions hold no template: their paths are not built.
  for (let i = 0; i < test.assert.length; i++) {
    const a = test.assert[i] as AssertionSpec;
    if (hasTemplate(a.config)) checkAssertionTemplates(source, [...at, 'assert', i], a, assertions);
  }
  for (const side of ['before', 'after'] as const) {
    const steps = test[side];
    if (!Array.isArray(steps)) continue;
    for (const [i, step] of steps.entries())
      checkTemplateVars(source, [...at, side, i], step, { names, what: 'this step', ownTest });
  }
};
