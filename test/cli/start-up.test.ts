import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loadedSources, nodeModulesLoaded, sourceLinesRun } from '../support/loaded-sources.js';
import { type TempProject, tempProject } from '../support/project.js';

let project: TempProject | undefined;
afterEach(() => project?.remove());

/** An eval whose prompt and assertion are `template`s over one var. */
const evalWith = (template: string): string =>
  `targets: [{kind: echo}]\nprompts: ["Say ${template}"]\n` +
  `tests:\n  - vars: {word: hi}\n    assert: [{type: contains, value: "${template}"}]\n`;

const from = (sources: readonly string[], pattern: RegExp): string[] => sources.filter((s) => pattern.test(s));

// Counted, not timed: every module a command loads is read and compiled on each start.
describe('what a command loads', () => {
  it('plans bare {{ var }} templates without Liquid, zod speaking English alone, no JavaScript grader threads', () => {
    project = tempProject({ 'a.eval.yaml': evalWith('{{ word }}') });
    const sources = loadedSources(['eval', 'run', '--dry-run'], project.dir);
    expect(from(sources, /src\/plan\/load-eval\.ts$/)).toHaveLength(1);
    expect(from(sources, /node_modules\/liquidjs\//)).toEqual([]);
    expect(from(sources, /node_modules\/zod\/v4\/locales\/(?!en\.js)/)).toEqual([]);
    expect(sources).toContain('node:fs');
    expect(sources).not.toContain('node:worker_threads');
    // A dry run opens no store: neither Kysely nor the PostgreSQL client is read.
    expect(from(sources, /node_modules\/(kysely|pg)\//)).toEqual([]);
  });

  it('runs an eval without node:child_process, node:fs/promises, node:http or node:tls, which nothing in it uses', () => {
    project = tempProject({ 'a.eval.yaml': evalWith('{{ word }}') });
    const sources = loadedSources(['eval', 'run', '-q'], project.dir);
    expect(from(sources, /src\/engine\/steps\/exec\.ts$/)).toHaveLength(1);
    for (const name of ['node:child_process', 'node:dgram', 'node:fs/promises', 'node:http', 'node:tls'])
      expect(sources).not.toContain(name);
  });

  it('loads node:fs/promises on first use: a cli target reads its output_file through it', () => {
    project = tempProject({
      'a.eval.yaml':
        'targets: [{kind: cli, command: "printf hi > out.txt", output_file: out.txt}]\nprompts: ["Say hi"]\n' +
        'tests:\n  - assert: [{type: contains, value: hi}]\n',
    });
    // Exits 0: the answer was read from the file.
    const sources = loadedSources(['eval', 'run', '-q'], project.dir);
    expect(sources).toContain('node:fs/promises');
  });

  it('builds the config schema of the target and grader kinds a run meets, none of the others', () => {
    project = tempProject({ 'a.eval.yaml': evalWith('{{ word }}') });
    const ran = sourceLinesRun(['eval', 'run', '-q'], project.dir);
    // Whether the function that makes a module's schema on first use (once), which begins on its line, ran.
    const made = (file: string, name: string): boolean => {
      const source = fileURLToPath(new URL(`../../src/${file}`, import.meta.url));
      const line = readFileSync(source, 'utf8')
        .split('\n')
        .findIndex((l) => l.includes(`const ${name} = once(`));
      expect(line, `${file} makes ${name} once`).toBeGreaterThanOrEqual(0);
      return ran.get(source)?.has(line + 1) ?? false;
    };
    // Met: the echo target and the contains grader.
    expect(made('targets/echo.ts', 'config')).toBe(true);
    expect(made('graders/contains.ts', 'config')).toBe(true);
    for (const [file, name] of [
      ['targets/http.ts', 'config'],
      ['targets/anthropic.ts', 'config'],
      ['graders/regex.ts', 'config'],
      ['engine/steps/exec.ts', 'config'],
      ['workspaces/spec.ts', 'workspaceSpecSchema'],
      ['plan/task-schema.ts', 'taskShapeSchema'],
    ] as const)
      expect(made(file, name), `${file} ${name}`).toBe(false);
  });

  it('loads Liquid for a template that needs it', () => {
    project = tempProject({ 'a.eval.yaml': evalWith('{{ word | upcase }}') });
    const sources = loadedSources(['eval', 'run', '--dry-run'], project.dir);
    expect(from(sources, /node_modules\/liquidjs\//)).not.toEqual([]);
  });

  it('starts as a CommonJS program: an eval run never starts ES module loading, which a module step still gets', () => {
    project = tempProject({
      'a.eval.yaml': evalWith('{{ word }}'),
      'step.mjs': 'export async function execute() {\n  return { set: { ok: true } };\n}\n',
      'step.task.yaml': 'id: step\nsteps:\n  - {id: s, type: module, module: step.mjs}\n',
    });
    // The modules that load, link and evaluate ES modules: what an ES module entry costs every start (~8 ms).
    const esmLoading = (args: string[]): string[] =>
      nodeModulesLoaded(args, (project as TempProject).dir).filter((m) =>
        /^NativeModule internal\/modules\/esm\/(module_job|translators|resolve)$/.test(m),
      );
    expect(esmLoading(['eval', 'run', '-q'])).toEqual([]);
    expect(esmLoading(['task', 'run', 'step.task.yaml'])).not.toEqual([]);
  });
});
