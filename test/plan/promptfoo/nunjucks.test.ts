import { describe, expect, it } from 'vitest';
import { toLiquid } from '../../../src/plan/promptfoo/nunjucks.js';
import { renderTemplate } from '../../../src/template.js';

const render = (nunjucks: string, vars: Record<string, unknown>): string => renderTemplate(toLiquid(nunjucks), vars);

describe('nunjucks spellings of promptfoo templates', () => {
  it('renders filters called with arguments, elif and loop variables', () => {
    expect(render('{{ xs | dump(2) }}', { xs: [1] })).toBe('[\n  1\n]');
    expect(render('{{ s | replace("a", "o") }}', { s: 'cat' })).toBe('cot');
    expect(render('{% if n > 2 %}big{% elif n > 1 %}mid{% else %}small{% endif %}', { n: 2 })).toBe('mid');
    expect(render('{% for x in xs %}{{ loop.index }}:{{ x | upper }} {% endfor %}', { xs: ['a', 'b'] })).toBe(
      '1:A 2:B ',
    );
  });

  it('leaves text without template markup alone', () => {
    const text = 'call f(x) | g(y) and loop.index';
    expect(toLiquid(text)).toBe(text);
  });
});
