import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';

const target = 'targets: [{ kind: echo }]\n';

/** Nine anchors, each a list of ten aliases of the one before: expanded, a billion leaves ("billion laughs"). */
const aliasBomb = (): string => {
  const names = 'abcdefghi'.split('');
  const lines = names.map((n, i) => {
    const items = i === 0 ? Array(10).fill('lol') : Array(10).fill(`*${names[i - 1]}`);
    return `      ${n}: &${n} [${items.join(', ')}]`;
  });
  return `${target}prompts: [hi]\ntests:\n  - vars:\n${lines.join('\n')}\n`;
};

const cases: {
  name: string;
  files: Record<string, string>;
  args?: string[];
  where: string;
  says: RegExp;
  /** What the message must not say: a wrong fix, a stack trace. */
  never?: RegExp;
}[] = [
  {
    name: 'unparsable YAML',
    files: { 'a.eval.yaml': `${target}tests:\n  - id: x\n    vars: { a: 1\n` },
    where: 'a.eval.yaml:5:1',
    says: /flow|collection|expected|missing/i,
  },
  {
    name: 'an unknown key',
    files: { 'a.eval.yaml': `${target}prompts: [hi]\ntests:\n  - id: x\n    assrt: []\n` },
    where: 'a.eval.yaml:5:5',
    says: /assrt/,
  },
  {
    name: 'a missing file:// file',
    files: { 'a.eval.yaml': `${target}prompts: [hi]\ntests: file://missing.csv\n` },
    where: 'a.eval.yaml:3:8',
    says: /missing\.csv/,
  },
  {
    name: 'an unknown target label',
    files: { 'a.eval.yaml': 'targets: [nosuch]\nprompts: [hi]\ntests:\n  - id: x\n' },
    where: 'a.eval.yaml:1:11',
    says: /nosuch/,
  },
  {
    name: 'an unknown assertion type',
    files: {
      'a.eval.yaml': `${target}prompts: [hi]\ntests:\n  - id: x\n    assert:\n      - type: contians\n        value: a\n`,
    },
    where: 'a.eval.yaml:6:',
    says: /contians[\s\S]*contains/,
  },
  {
    name: 'a duplicate test id',
    files: { 'a.eval.yaml': `${target}prompts: [hi]\ntests:\n  - id: x\n  - id: x\n` },
    where: 'a.eval.yaml:5:',
    says: /duplicate/i,
  },
  {
    name: 'an unknown target kind in proctor.toml',
    files: {
      'proctor.toml': '[targets.m]\nkind = "opneai"\n',
      'a.eval.yaml': 'targets: [m]\nprompts: [hi]\ntests: [{ id: x }]\n',
    },
    where: 'proctor.toml:2:',
    says: /opneai[\s\S]*openai/,
  },
  {
    name: 'an empty test list',
    files: { 'a.eval.yaml': `${target}prompts: [hi]\ntests: []\n` },
    where: 'a.eval.yaml:3:8',
    says: /tests[\s\S]*at least one test/,
  },
  {
    name: 'max_concurrency: 0',
    files: { 'a.eval.yaml': `${target}prompts: [hi]\nevaluate_options: { max_concurrency: 0 }\n` },
    where: 'a.eval.yaml:3:38',
    says: /max_concurrency[\s\S]*at least 1/,
    never: /at least 0/,
  },
  {
    name: 'timeout_s: 0',
    files: { 'a.eval.yaml': `${target}prompts: [hi]\nevaluate_options: { timeout_s: 0 }\n` },
    where: 'a.eval.yaml:3:32',
    says: /timeout_s[\s\S]*greater than 0/,
    never: /at least 0/,
  },
  {
    name: 'a YAML alias bomb',
    files: { 'a.eval.yaml': aliasBomb() },
    where: 'a.eval.yaml:10:',
    says: /alias \*e/,
    never: /ReferenceError|internal error|\n\s+at /,
  },
  {
    name: 'an alias to no anchor',
    files: { 'a.eval.yaml': `${target}prompts: [hi]\ntests:\n  - vars: { a: *nosuch }\n` },
    where: 'a.eval.yaml:4:16',
    says: /nosuch/,
    never: /ReferenceError|internal error|\n\s+at /,
  },
  {
    name: 'a javascript grader whose file:// file is missing',
    files: {
      'a.eval.yaml': `${target}prompts: [hi]\ntests:\n  - assert:\n      - { type: javascript, value: file://checks/nope.js }\n`,
    },
    where: 'a.eval.yaml:5:36',
    says: /checks\/nope\.js/,
  },
  {
    name: 'a path that does not exist',
    files: {},
    args: ['nothere.eval.yaml'],
    where: 'nothere.eval.yaml',
    says: /not/i,
  },
];

describe('bad input', () => {
  for (const c of cases) {
    it(`${c.name}: exits 2 naming file:line:col and the fix, and writes nothing`, async () => {
      const project = tempProject(c.files);
      const result = await runCli(['eval', 'run', ...(c.args ?? [])], { cwd: project.dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(c.where);
      expect(result.stderr).toMatch(c.says);
      expect(result.stderr).toMatch(/fix:/);
      if (c.never) expect(result.stderr).not.toMatch(c.never);
      expect(project.exists('.proctor')).toBe(false);
      const validate = await runCli(['eval', 'validate', ...(c.args ?? [])], { cwd: project.dir });
      expect(validate.code).toBe(2);
      expect(validate.stderr).toContain(c.where);
    });
  }

  it('an unknown flag is a usage error with exit 2', async () => {
    const project = tempProject({});
    const result = await runCli(['eval', 'run', '--max-concurency', '3'], { cwd: project.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown option/);
  });
});
