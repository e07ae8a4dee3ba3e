import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, stringify } from 'yaml';
import type { Path } from '../../src/plan/source.js';
import { parseYamlBlock } from '../../src/plan/yaml-block.js';
import { YamlSource } from '../../src/plan/yaml-source.js';

/** What `yaml` makes of a text: its value and, for every path, where the value and its key start. */
const byYaml = (text: string) => {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const positions = new Map<string, { key?: unknown; value: unknown }>();
  const at = (node: unknown) => {
    const range = (node as { range?: number[] } | null)?.range;
    return range ? lines.linePos(range[0] ?? 0) : undefined;
  };
  const walk = (node: Node | null | unknown, path: Path) => {
    if (isMap(node))
      for (const pair of node.items) {
        if (!isScalar(pair.key)) continue;
        const p = [...path, String(pair.key.value)];
        positions.set(JSON.stringify(p), { key: at(pair.key), value: at(pair.value) ?? at(pair.key) });
        walk(pair.value, p);
      }
    else if (isSeq(node))
      node.items.forEach((item, i) => {
        positions.set(JSON.stringify([...path, i]), { value: at(item) });
        walk(item, [...path, i]);
      });
  };
  walk(doc.contents, []);
  return { errors: doc.errors.length, value: doc.errors.length ? undefined : doc.toJS(), positions };
};

/** Checks the fast read of `text`, if it reads it, against `yaml`: the same value, the same key order and positions. */
const agrees = (text: string): boolean => {
  const fast = parseYamlBlock(text);
  if (!fast) return false;
  const full = byYaml(text);
  expect(full.errors, `yaml refuses what the fast read took:\n${text}`).toBe(0);
  expect(fast.value, text).toStrictEqual(full.value);
  expect(JSON.stringify(fast.value), text).toBe(JSON.stringify(full.value));
  const source = YamlSource.parse('f.yaml', text);
  for (const [key, want] of full.positions) {
    const p = JSON.parse(key) as Path;
    const { line, col } = source.pos(p);
    expect({ path: p, line, col }, text).toEqual({ path: p, ...(want.value as object) });
    if (want.key) {
      const k = source.pos(p, 'key');
      expect({ path: p, line: k.line, col: k.col }, text).toEqual({ path: p, ...(want.key as object) });
    }
  }
  return true;
};

const repoYaml = (): string[] => {
  const root = path.resolve(import.meta.dirname, '../..');
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name.startsWith('.') || name === 'dist') continue;
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.ya?ml$/.test(name)) out.push(full);
    }
  };
  for (const d of ['examples', 'test']) walk(path.join(root, d));
  return out;
};

// A small deterministic generator: values of the shapes eval files hold, written in many styles.
const random = (seed: number) => {
  let x = seed * 7919 + 17;
  return (n: number): number => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % n;
  };
};
const scalars = [
  'hello',
  'hello world',
  'a: b',
  'a #b',
  'a#b',
  '#x',
  '- x',
  '-x',
  '-1',
  '+2',
  '0x1F',
  '0o17',
  '1e3',
  '.5',
  '1.0',
  '.inf',
  '-.Inf',
  '.nan',
  'true',
  'False',
  'NULL',
  '~',
  'null',
  '',
  ' lead',
  'trail ',
  "it's",
  'say "hi"',
  'http://127.0.0.1:8080/v1',
  'back\\slash',
  'tab\tin',
  'line\nbreak',
  'two\n\nbreaks\n',
  'ends\n',
  '[x]',
  '{x}',
  '{{ var }}',
  'é ü ☃',
  '@at',
  '`tick',
  '%pct',
  '*star',
  '&amp',
  '!bang',
  '|pipe',
  '>gt',
  '?q',
  ':c',
  ',comma',
  'a,b',
  '12:30',
  '2024-01-01',
  'yes',
  'no',
  'on',
  '0',
  '007',
  '-0',
  '1_000',
  '3.14',
  'x: ',
  ' ',
  'a  b',
  'ends:',
  'a long line of words that a narrow width folds onto several lines of text',
  'words\nand lines\n\nof a long prompt that folds onto several lines\n',
];
const randomValue = (next: (n: number) => number, depth: number, pool: readonly string[]): unknown => {
  const pick = next(10);
  if (depth > 3 || pick < 5) {
    const s = pool[next(pool.length)] ?? '';
    return next(4) === 0 ? Number(next(2000) - 1000) : next(9) === 0 ? [true, false, null][next(3)] : s;
  }
  if (pick < 7) return Array.from({ length: 1 + next(3) }, () => randomValue(next, depth + 1, pool));
  const o: Record<string, unknown> = {};
  for (let i = 0, n = 1 + next(4); i < n; i++)
    o[pool[next(pool.length)] || `k${i}`] = randomValue(next, depth + 1, pool);
  return o;
};

describe('parseYamlBlock', () => {
  it('reads what yaml reads, the same, at the same positions: the repository’s YAML files', () => {
    const files = repoYaml();
    expect(files.length).toBeGreaterThan(3);
    let read = 0;
    for (const file of files) if (agrees(readFileSync(file, 'utf8'))) read++;
    expect(read).toBeGreaterThan(3);
  });

  it('reads what yaml reads, the same, at the same positions: generated documents in many styles', () => {
    let read = 0;
    let total = 0;
    // Every kind of scalar, and then only text, so that whole documents of block scalars are read too.
    const text = scalars.filter((s) => /^[a-z][a-z\n ]*[a-z]\n?$/.test(s));
    for (let seed = 0; seed < 600; seed++) {
      const next = random(seed);
      const pool = seed % 2 ? scalars : text;
      const value = {
        tests: Array.from({ length: 1 + next(3) }, () => randomValue(next, 1, pool)),
        top: randomValue(next, 1, pool),
      };
      const texts = [
        stringify(value),
        stringify(value, { indent: 4, indentSeq: false }),
        stringify(value, { defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN' }),
        stringify(value, { defaultStringType: 'QUOTE_SINGLE' }),
        stringify(value, { collectionStyle: 'flow' }),
        stringify(value, { blockQuote: 'folded', lineWidth: 20 }),
        stringify(value, { blockQuote: 'literal', lineWidth: 0 }),
        stringify(value, { defaultStringType: 'BLOCK_FOLDED', lineWidth: 24 }),
        stringify(value, { defaultStringType: 'BLOCK_LITERAL', indent: 3 }),
        `# a comment\n---\n${stringify(value, { indentSeq: false })}\n\n# the end\n`,
      ];
      for (const text of texts) {
        total++;
        if (agrees(text)) read++;
        // Damaged texts: whatever the fast read takes must still be what yaml makes of it.
        const cut = next(text.length);
        for (const damaged of [text.slice(0, cut) + text.slice(cut + 1), `${text.slice(0, cut)} ${text.slice(cut)}`]) {
          total++;
          if (agrees(damaged)) read++;
        }
      }
    }
    // Most plain documents take the fast read; the check above is what matters, this that it is exercised.
    expect(read / total).toBeGreaterThan(0.3);
  });

  it('reads comments, block scalars of each chomping, flow collections and indentless sequences', () => {
    const text = [
      '# suite',
      'description: a suite # trailing comment',
      'targets:',
      '- { kind: openai, base_url: "http://127.0.0.1:9/v1", model: fake, "api_key": k }',
      "prompts: [\"Hi {{ name }}\", 'it''s']",
      'tests:',
      '  - vars: { name: -1, n: 0x10, f: .5 }',
      '    assert:',
      '      - type: equals',
      '        value: |',
      '          line one',
      '',
      '          line three',
      '      - type: contains',
      '        value: >-',
      '          folded',
      '          text',
      '',
      '          kept',
      '      - type: regex',
      '        value: |+',
      '          keep',
      '',
      '',
      '  -',
      '    vars:',
      '      empty:',
      '      list: []',
      '      map: {}',
      '',
    ].join('\n');
    expect(agrees(text)).toBe(true);
    expect(agrees(`${text}extra: "\\u00e9\\t\\"q\\""\n`)).toBe(true);
  });

  it('leaves to yaml what it does not read: anchors, tags, multi-line scalars, tabs, duplicate keys, errors', () => {
    for (const text of [
      'a: &x 1\nb: *x\n',
      'a: !!str 1\n',
      'a: "two\n  lines"\n',
      'a: plain\n  continued\n',
      'a:\tb\n',
      'a: 1\na: 2\n',
      'a: [1,\n  2]\n',
      'a: |2\n   x\n',
      '"a": 1\n\'a\': 2\n',
      'just a scalar\n',
      'a: b: c\n',
      '- a\nb: 1\n',
      '? complex\n: key\n',
      'a: 1\n---\nb: 2\n',
      '<<: {a: 1}\n',
      '__proto__: 1\n',
      '1: numeric key\n',
      'a: |\n  no final break',
      'a: "x"#no space\n',
    ])
      expect(parseYamlBlock(text), text).toBeUndefined();
  });

  it('names the line and column of an error after a fast read, as the full parse does', () => {
    const source = YamlSource.parse('f.yaml', 'tests:\n  - vars:\n    assert: []\n  - id: b\n    vars:\n');
    expect(source.pos(['tests', 1, 'id'])).toEqual({ file: 'f.yaml', line: 4, col: 9 });
    expect(source.pos(['tests', 1, 'id'], 'key')).toEqual({ file: 'f.yaml', line: 4, col: 5 });
    expect(source.pos(['tests', 0, 'vars'])).toEqual({ file: 'f.yaml', line: 2, col: 10 });
    expect(source.pos(['tests', 9])).toEqual({ file: 'f.yaml', line: 2, col: 3 });
  });
});
