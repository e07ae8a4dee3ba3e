/**
 * The nunjucks spellings promptfoo templates use that Liquid writes differently: a filter called with
 * arguments (`| dump(2)` → `| dump: 2`), `elif` (→ `elsif`) and `loop.*` (→ `forloop.*`). Everything else
 * promptfoo users write (`{{ var }}`, `{% for %}`, `{% if %}`, the filters in template.ts) is the same.
 */
export const toLiquid = (text: string): string =>
  text.includes('{{') || text.includes('{%')
    ? text
        .replace(/\|\s*([A-Za-z_]\w*)\(([^()]*)\)/g, (_, name: string, args: string) =>
          args.trim() === '' ? `| ${name}` : `| ${name}: ${args}`,
        )
        .replace(/\{%(-?)\s*elif\b/g, '{%$1 elsif')
        .replace(/\bloop\.(index0|index|first|last|length|revindex0|revindex)\b/g, 'forloop.$1')
    : text;
