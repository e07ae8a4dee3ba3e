import { Liquid, type Template } from 'liquidjs';

/**
 * The one template syntax of Proctor: Liquid's `{{ var }}` (liquidjs), in prompts, vars and grader configs.
 * A prompt is rendered once per case, so parsed templates are cached by source and plain text skips Liquid.
 */

export type CompiledTemplate = (vars: Readonly<Record<string, unknown>>) => string;

const engine = new Liquid({
  strictVariables: false,
  strictFilters: true,
  // Objects and arrays print as JSON: Liquid's default (`[object Object]`, arrays joined with no separator)
  // is never what a prompt wants.
  outputEscape: (value: unknown) =>
    value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value ?? ''),
});

// Bounded so a long run rendering many distinct sources (e.g. templated vars) cannot grow memory forever.
const maxCached = 5000;
const cache = new Map<string, CompiledTemplate>();

/** True when the text holds Liquid markup; everything else renders to itself. */
export const isTemplate = (src: string): boolean => src.includes('{{') || src.includes('{%');

const identity =
  (src: string): CompiledTemplate =>
  () =>
    src;

/** Parses once and returns a renderer; throws liquidjs's parse error (with line and col) on bad syntax. */
export const compileTemplate = (src: string): CompiledTemplate => {
  if (!isTemplate(src)) return identity(src);
  const hit = cache.get(src);
  if (hit) return hit;
  const parsed: Template[] = engine.parse(src);
  const compiled: CompiledTemplate = (vars) => String(engine.renderSync(parsed, vars));
  if (cache.size >= maxCached) {
    const oldest = cache.keys().next();
    if (!oldest.done) cache.delete(oldest.value);
  }
  cache.set(src, compiled);
  return compiled;
};

/** Renders `template` with `vars`; text without `{{` or `{%` is returned as is, without touching Liquid. */
export const renderTemplate = (template: string, vars: Readonly<Record<string, unknown>>): string =>
  isTemplate(template) ? compileTemplate(template)(vars) : template;

/** For tests and diagnostics: how many parsed templates are cached. */
export const templateCacheSize = (): number => cache.size;
