import { Liquid } from 'liquidjs';
import { describe, expect, it, vi } from 'vitest';
import {
  compileTemplate,
  isTemplate,
  renderTemplate,
  templateCacheSize,
  templateVariables,
} from '../../src/template.js';

describe('renderTemplate', () => {
  it('substitutes {{ var }}, nested paths and filters', () => {
    expect(
      renderTemplate('Hi {{ name }} from {{ place.city | upcase }}', { name: 'Ada', place: { city: 'paris' } }),
    ).toBe('Hi Ada from PARIS');
  });

  it('renders a missing var as empty and objects as JSON', () => {
    expect(renderTemplate('[{{ nope }}] {{ o }} {{ xs }}', { o: { k: 1 }, xs: [1, 'a'] })).toBe('[] {"k":1} [1,"a"]');
  });

  it('renders text whose outputs are bare variables exactly as Liquid does', () => {
    const liquid = new Liquid({
      strictVariables: false,
      outputEscape: (v: unknown) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v ?? '')),
    });
    const vars = { s: 'a {{ b }} "q"', n: 4.5, t: true, z: null, o: { k: [1] }, xs: ['x', 2], true: 'shadow' };
    for (const src of [
      'Ticket {{ s }} from {{n}} about {{  t  }}: {{ z }}|{{ missing }}|{{ o }}|{{ xs }}',
      '{{ constructor }}{{ toString }}{{ __proto__ }}',
      '{{ true }} {{ nil }} {{ empty }} }} alone',
      '{{ s }} and {{ s | upcase }}',
      '{{- s }} {{ n -}} !',
    ]) {
      expect(renderTemplate(src, vars), src).toBe(liquid.parseAndRenderSync(src, vars));
    }
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

  it('has the nunjucks filters promptfoo templates use', () => {
    const vars = { q: 'say "hi"', xs: ['a', 'b'], n: '3.5', t: '  the cat sat  ' };
    expect(renderTemplate('{{ q | dump }}', vars)).toBe('"say \\"hi\\""');
    expect(renderTemplate('{{ xs | dump: 2 }}', vars)).toBe('[\n  "a",\n  "b"\n]');
    expect(renderTemplate('{{ q | upper }} {{ q | lower }} {{ t | trim | title }}', vars)).toBe(
      'SAY "HI" say "hi" The Cat Sat',
    );
    expect(renderTemplate('{{ xs | length }} {{ t | wordcount }} {{ n | int }} {{ n | float }}', vars)).toBe(
      '2 3 3 3.5',
    );
  });

  it('lists the variables a template reads from outside, not a loop’s own', () => {
    expect(
      templateVariables('{{ a.b }} {% for x in xs %}{{ x }}{{ forloop.index }}{% endfor %} {{ c | dump }}'),
    ).toEqual(['a', 'xs', 'c']);
    expect(templateVariables('no template here')).toEqual([]);
  });

  it('lists the variables of bare outputs as Liquid does', () => {
    const liquid = new Liquid();
    for (const src of [
      '{{ a }} {{ b }} {{a}}',
      'x {{ true }} {{ n }} }} alone',
      '{{ for }}{{ _x1 }}',
      '{{ a.b }} {{ c }}',
    ]) {
      expect(templateVariables(src), src).toEqual(liquid.globalVariablesSync(src).map((v) => String(v).split('.')[0]));
    }
  });

  it('checks and renders bare variables without creating Liquid, which costs every command 40-100 ms', async () => {
    vi.resetModules();
    const fresh = await import('../../src/template.js');
    expect(fresh.templateVariables('Ticket {{ ref }} from {{customer}} re {{ ref }}')).toEqual(['ref', 'customer']);
    expect(fresh.renderTemplate('Ticket {{ ref }}', { ref: 'R-1' })).toBe('Ticket R-1');
    expect(fresh.liquidCreated()).toBe(false);
    expect(fresh.templateVariables('{{ a.b }}')).toEqual(['a']);
    expect(fresh.liquidCreated()).toBe(true);
  });
});
