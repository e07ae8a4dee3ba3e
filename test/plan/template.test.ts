import { describe, expect, it } from 'vitest';
import { compileTemplate, isTemplate, renderTemplate, templateCacheSize } from '../../src/template.js';

describe('renderTemplate', () => {
  it('substitutes {{ var }}, nested paths and filters', () => {
    expect(
      renderTemplate('Hi {{ name }} from {{ place.city | upcase }}', { name: 'Ada', place: { city: 'paris' } }),
    ).toBe('Hi Ada from PARIS');
  });

  it('renders a missing var as empty and objects as JSON', () => {
    expect(renderTemplate('[{{ nope }}] {{ o }} {{ xs }}', { o: { k: 1 }, xs: [1, 'a'] })).toBe('[] {"k":1} [1,"a"]');
  });

  it('supports tags', () => {
    expect(renderTemplate('{% if n > 1 %}many{% else %}one{% endif %}', { n: 2 })).toBe('many');
  });

  it('returns plain text unchanged without parsing or caching it', () => {
    const before = templateCacheSize();
    const text = `plain text ${Math.random()} with { braces }`;
    expect(isTemplate(text)).toBe(false);
    expect(renderTemplate(text, {})).toBe(text);
    expect(templateCacheSize()).toBe(before);
  });

  it('parses each source once and reuses it', () => {
    const src = `cached {{ v }} ${Math.random()}`;
    const before = templateCacheSize();
    const first = compileTemplate(src);
    expect(compileTemplate(src)).toBe(first);
    expect(templateCacheSize()).toBe(before + 1);
    expect(first({ v: 1 })).toMatch(/^cached 1 /);
    expect(renderTemplate(src, { v: 2 })).toMatch(/^cached 2 /);
    expect(templateCacheSize()).toBe(before + 1);
  });

  it('throws on bad syntax and on an unknown filter', () => {
    expect(() => compileTemplate('{% if x %}never closed')).toThrow();
    expect(() => renderTemplate('{{ x | nosuchfilter }}', { x: 1 })).toThrow(/nosuchfilter/);
  });
});
