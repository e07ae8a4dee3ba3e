import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProjectConfig } from '../../src/plan/config.js';
import { loadEvalFile } from '../../src/plan/load-eval.js';
import { YamlSource } from '../../src/plan/yaml-source.js';
import { inputError, tempProject } from './temp-project.js';

const load = (files: Record<string, string>) => {
  const root = tempProject({ 'proctor.toml': '[targets.echo]\nkind = "echo"\n', ...files });
  return loadEvalFile(path.join(root, 'a.eval.yaml'), loadProjectConfig(root, {}), {});
};

describe('YAML aliases', () => {
  it('reads a suite that shares one anchor thousands of times (more than yaml’s own alias count allows)', () => {
    const tests = Array.from({ length: 2000 }, (_, i) => `  - { id: t${i}, assert: *std }`).join('\n');
    const text = `prompts: [hi]\nx-anchors: &std [{ type: contains, value: hi }]\ntests:\n${tests}\n`;
    const source = YamlSource.parse('a.eval.yaml', text);
    const value = source.value as { tests: { assert: unknown }[] };
    expect(value.tests).toHaveLength(2000);
    expect(value.tests[1999]?.assert).toEqual([{ type: 'contains', value: 'hi' }]);
  });

  it('refuses a value that contains itself, at the alias', () => {
    const error = inputError(() => YamlSource.parse('a.eval.yaml', 'tests: &x\n  - vars: { a: *x }\n'));
    expect(error.where).toEqual({ file: 'a.eval.yaml', line: 2, col: 16 });
    expect(error.message).toMatch(/\*x is inside the value it names/);
  });

  it('places an alias problem in a JSONL line by its line in the file', () => {
    const error = inputError(() => YamlSource.parse('t.jsonl', '{ "vars": *none }', 6));
    expect(error.where).toEqual({ file: 't.jsonl', line: 7, col: 11 });
  });
});

describe('a tests file holding no test', () => {
  it('is refused at the reference', () => {
    const error = inputError(() => load({ 'a.eval.yaml': 'prompts: [hi]\ntests: file://t.csv\n', 't.csv': 'id,q\n' }));
    expect(error.where).toEqual({ file: 'a.eval.yaml', line: 2, col: 8 });
    expect(error.message).toMatch(/holds no test/);
  });
});
