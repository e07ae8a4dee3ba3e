import { createRequire } from 'node:module';
import type { Liquid, Template } from 'liquidjs';
import { remember } from './bounded-map.js';

/**
 * The one template syntax of Proctor: Liquid's `{{ var }}` (liquidjs), in prompts, vars and grader configs.
 * A prompt is rendered once per case, so parsed templates are cached by source and plain text skips Liquid.
 */

export type CompiledTemplate = (vars: Readonly<Record<string, unknown>>) => string;

// Objects and arrays print as JSON: Liquid's default (`[object Object]`, arrays joined with no separator) is
// never what a prompt wants.
const show = (value: unknown): string =>
  value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value ?? '');

// The nunjucks filters promptfoo users write most (`| dump`, `| upper`, …), under their nunjucks names, so a
// promptfoo template renders unchanged; Liquid's own names (`upcase`, `size`, …) keep working beside them.
const nunjucksFilters: Record<string, (value: unknown, ...args: unknown[]) => unknown> = {
  dump: (value, indent) => JSON.stringify(value, null, typeof indent === 'number' ? indent : undefined),
  upper: (value) => String(value ?? '').toUpperCase(),
  lower: (value) => String(value ?? '').toLowerCase(),
  title: (value) => String(value ?? '').replace(/\w\S*/g, (w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()),
  trim: (value) => String(value ?? '').trim(),
  length: (value) =>
    Array.isArray(value) || typeof value === 'string'
      ? value.length
      : value !== null && typeof value === 'object'
        ? Object.keys(value).length
        : 0,
  safe: (value) => value,
  string: (value) => (value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value ?? '')),
  int: (value) => Number.parseInt(String(value), 10) || 0,
  float: (value) => Number.parseFloat(String(value)) || 0,
  wordcount: (value) =>
    String(value ?? '')
      .split(/\s+/)
      .filter(Boolean).length,
};
/**
 * Loaded and made on the first template that is more than bare variables, which most suites never have: creating
 * it initialises ICU's date formats (for Liquid's `date` filter), 40-100 ms of every command, and its code is
 * ~120 KB that a bundle would compile every time. Required, not imported: templates are compiled synchronously.
 */
let engine: Liquid | undefined;
const liquid = (): Liquid => {
  if (!engine) {
    const liquidjs = createRequire(import.meta.url)('liquidjs') as typeof import('liquidjs');
    engine = new liquidjs.Liquid({ strictVariables: false, strictFilters: true, outputEscape: show });
    for (const [name, filter] of Object.entries(nunjucksFilters)) engine.registerFilter(name, filter);
  }
  return engine;
};

// Bounded so a long run rendering many distinct sources (e.g. templated vars) cannot grow memory forever.
const maxCached = 5000;
const cache = new Map<string, CompiledTemplate>();

/** True when the text holds Liquid markup; everything else renders to itself. */
export const isTemplate = (src: string): boolean => src.includes('{{') || src.includes('{%');

const identity =
  (src: string): CompiledTemplate =>
  () =>
    src;

// `{{ name }}`: a bare variable, no path, filter or whitespace control.
const bareOutput = /\{\{\s*([A-Za-z_]\w*)\s*\}\}/g;
// Names Liquid reads as literals, not variables.
const literals = new Set(['true', 'false', 'nil', 'null', 'empty', 'blank']);

/** Text whose every output is a bare variable, split as [text, name, text, name, …, text]; else undefined. */
const bareParts = (src: string): string[] | undefined => {
  if (src.includes('{%')) return undefined;
  const parts = src.split(bareOutput);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (i % 2 === 0 ? part.includes('{{') : literals.has(part)) return undefined;
  }
  return parts;
};

/**
 * Text whose every output is a bare variable (most prompts: `Ticket {{ ref }} from {{ customer }}`) renders by
 * concatenation, as Liquid would render it (own properties only, printed by `show`), at a tenth of its cost:
 * a 100,000-case suite renders each prompt once to fingerprint it and again to submit it. Undefined otherwise.
 */
const substitution = (src: string): CompiledTemplate | undefined => {
  const parts = bareParts(src);
  if (!parts) return undefined;
  return (vars) => {
    let out = parts[0] as string;
    for (let i = 1; i < parts.length; i += 2) {
      const name = parts[i] as string;
      out += show(Object.hasOwn(vars, name) ? vars[name] : undefined) + parts[i + 1];
    }
    return out;
  };
};

/** Parses once and returns a renderer; throws liquidjs's parse error (with line and col) on bad syntax. */
export const compileTemplate = (src: string): CompiledTemplate => {
  if (!isTemplate(src)) return identity(src);
  const hit = cache.get(src);
  if (hit) return hit;
  let compiled = substitution(src);
  if (!compiled) {
    const engine = liquid();
    const parsed: Template[] = engine.parse(src);
    compiled = (vars) => String(engine.renderSync(parsed, vars));
  }
  remember(cache, src, compiled, maxCached);
  return compiled;
};

// A suite of 100,000 tests sharing a few templated assertions checks each distinct source once.
const variablesCache = new Map<string, string[]>();

/**
 * The variables a template reads from outside (`{{ a.b }}` reads `a`; a `for` loop's own variable is not
 * one), for the plan's check that every test gives them. Throws liquidjs's parse error on bad syntax.
 */
export const templateVariables = (src: string): string[] => {
  if (!isTemplate(src)) return [];
  const hit = variablesCache.get(src);
  if (hit) return hit;
  // Bare variables are the names between the text, each once in order of use, as Liquid lists them.
  const parts = bareParts(src);
  const names = parts
    ? [...new Set(parts.filter((_, i) => i % 2 === 1))]
    : liquid()
        .globalVariablesSync(src)
        .map((v) => String(v).split(/[.[]/)[0] ?? '');
  remember(variablesCache, src, names, maxCached);
  return names;
};

/** Renders `template` with `vars`; text without `{{` or `{%` is returned as is, without touching Liquid. */
export const renderTemplate = (template: string, vars: Readonly<Record<string, unknown>>): string =>
  isTemplate(template) ? compileTemplate(template)(vars) : template;

/** For tests and diagnostics: how many parsed templates are cached. */
export const templateCacheSize = (): number => cache.size;

/** For tests and diagnostics: whether a template has needed Liquid itself. */
export const liquidCreated = (): boolean => engine !== undefined;
