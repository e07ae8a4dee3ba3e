import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProjectConfig } from '../../src/plan/config.js';
import { inputError, tempProject } from './temp-project.js';

const toml = (text: string): string => `${text.trim()}\n`;
/** `${NAME}` as written in a config file. */
const ref = (name: string): string => `\${${name}}`;

describe('loadProjectConfig', () => {
  it('uses defaults with root = cwd when there is no proctor.toml', () => {
    const root = tempProject({ 'evals/a.eval.yaml': 'prompts: hi\n' });
    const config = loadProjectConfig(root, {});
    expect(config).toEqual({
      root,
      runner: { kind: 'local', config: {} },
      store: { url: `sqlite:${path.join(root, '.proctor/proctor.db')}` },
      targets: {},
      defaults: {},
      pricing: {},
    });
  });

  it('finds proctor.toml in an ancestor and reads every section', () => {
    const root = tempProject({
      'proctor.toml': toml(`
[runner]
kind = "local"
[runner.config]
workers = 3
heartbeat_ms = 500
lease_ms = 5000
[store]
url = "sqlite:data/x.db"
[defaults]
max_concurrency = 8
repeat = 2
timeout_s = 30
retries = 1
[targets.fast]
kind = "echo"
max_concurrency = 2
prefix = ">"
`),
    });
    const sub = path.join(root, 'a', 'b');
    mkdirSync(sub, { recursive: true });
    const config = loadProjectConfig(sub, {});
    expect(config.root).toBe(root);
    expect(config.file).toBe(path.join(root, 'proctor.toml'));
    expect(config.runner).toEqual({ kind: 'local', config: { workers: 3, heartbeatMs: 500, leaseMs: 5000 } });
    expect(config.store.url).toBe(`sqlite:${path.join(root, 'data/x.db')}`);
    expect(config.defaults).toEqual({ maxConcurrency: 8, repeat: 2, timeoutS: 30, retries: 1 });
    expect(config.targets.fast).toEqual({
      label: 'fast',
      kind: 'echo',
      maxConcurrency: 2,
      config: { prefix: '>' },
      baseDir: root,
    });
  });

  it('interpolates env references outside targets, reading an integer reference as a number', () => {
    const root = tempProject({
      'proctor.toml': toml(`
[store]
url = "postgres://\${PGHOST:-localhost}/\${DB}"
[runner.config]
workers = "\${WORKERS}"
`),
    });
    const config = loadProjectConfig(root, { DB: 'evals', WORKERS: '6' });
    expect(config.store.url).toBe('postgres://localhost/evals');
    expect(config.runner).toEqual({ kind: 'local', config: { workers: 6 } });
  });

  it('keeps target configs raw so secrets are never resolved into the plan', () => {
    const root = tempProject({
      'proctor.toml': toml(`
[targets.gpt]
kind = "openai"
base_url = "\${BASE_URL}"
model = "gpt-4o-mini"
api_key = "\${OPENAI_API_KEY}"
`),
    });
    const config = loadProjectConfig(root, { BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-secret' });
    expect(config.targets.gpt?.config).toEqual({
      base_url: ref('BASE_URL'),
      model: 'gpt-4o-mini',
      api_key: ref('OPENAI_API_KEY'),
    });
    expect(JSON.stringify(config)).not.toContain('sk-secret');
  });

  it('validates a target config against its interpolated value', () => {
    const root = tempProject({
      'proctor.toml': toml(`
[targets.gpt]
kind = "openai"
base_url = "\${BASE_URL}"
model = "m"
`),
    });
    const error = inputError(() => loadProjectConfig(root, { BASE_URL: 'not a url' }));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 3, col: 1 });
    expect(error.message).toContain('targets.gpt.base_url');
  });

  it('does not fail on a secret that is unset where the config is loaded', () => {
    const root = tempProject({
      'proctor.toml': toml(`
[targets.gpt]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m"
api_key = "\${UNSET_KEY}"
`),
    });
    expect(loadProjectConfig(root, {}).targets.gpt?.config.api_key).toBe(ref('UNSET_KEY'));
  });

  it('reports an unknown key at its line with a suggestion', () => {
    const root = tempProject({ 'proctor.toml': toml('[runner]\nkind = "local"\n\n[store]\n  uri = "x"') });
    const error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 5, col: 3 });
    expect(error.message).toBe('unknown key "uri" in store');
    expect(error.hint).toContain('did you mean "url"');
    expect(error.format()).toMatch(/^proctor\.toml:5:3: unknown key "uri" in store\n {2}fix: /);
  });

  it('reports an unknown section at its header', () => {
    const root = tempProject({ 'proctor.toml': toml('[runner]\nkind = "local"\n[defualts]\nrepeat = 2') });
    const error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 3, col: 1 });
    expect(error.hint).toContain('did you mean "defaults"');
  });

  it('reports a bad value and an unknown runner kind', () => {
    let root = tempProject({ 'proctor.toml': toml('[defaults]\nrepeat = 2\nretries = -1') });
    let error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 3, col: 1 });
    expect(error.message).toContain('defaults.retries');
    expect(error.hint).toContain('at least 0');

    root = tempProject({ 'proctor.toml': toml('[runner]\nkind = "cluster"') });
    error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 2, col: 1 });
    expect(error.hint).toBe('use one of: "local", "queue"');
  });

  it('reads [defaults] budget_usd, a positive number, which only proctor.toml may set', () => {
    let root = tempProject({ 'proctor.toml': toml(`[defaults]\nbudget_usd = "${ref('BUDGET')}"`) });
    expect(loadProjectConfig(root, { BUDGET: '2.5' }).defaults).toEqual({ budgetUsd: 2.5 });
    root = tempProject({ 'proctor.toml': toml('[defaults]\nretries = 1\nbudget_usd = 0') });
    const error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 3, col: 1 });
    expect(error.message).toContain('defaults.budget_usd');
  });

  it('checks [runner.config] against its kind, and refuses a queue runner over a SQLite store', () => {
    let root = tempProject({
      'proctor.toml': toml('[store]\nurl = "postgres://h/db"\n[runner]\nkind = "queue"\n[runner.config]\nlock_ms = 0'),
    });
    let error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 6, col: 1 });
    expect(error.message).toContain('runner.config.lock_ms');

    root = tempProject({ 'proctor.toml': toml('[runner]\nkind = "queue"') });
    error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 2, col: 1 });
    expect(error.message).toContain('cannot reach a SQLite store');
    expect(error.hint).toContain('postgres://');

    root = tempProject({
      'proctor.toml': toml(
        `[store]\nurl = "postgres://h/db"\n[runner]\nkind = "queue"\n[runner.config]\nredis = "\${R}"`,
      ),
    });
    expect(loadProjectConfig(root, { R: 'redis://r:1' }).runner).toMatchObject({
      kind: 'queue',
      config: { redis: 'redis://r:1', pool: 'default', lockMs: 60_000 },
    });
  });

  it('reports an unknown target kind with the nearest kind', () => {
    const root = tempProject({ 'proctor.toml': toml('[targets.a]\nkind = "ecko"') });
    const error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 2, col: 1 });
    expect(error.message).toBe('unknown target kind "ecko"');
    expect(error.hint).toMatch(/^did you mean "echo"\? Known kinds: openai, anthropic, http, cli, echo/);
  });

  it('reports a target without a kind and an unknown target key', () => {
    let root = tempProject({ 'proctor.toml': toml('[store]\nurl = "sqlite:x.db"\n[targets.a]\nprefix = "x"') });
    let error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 3, col: 1 });
    expect(error.message).toBe('target "a" has no kind');

    root = tempProject({ 'proctor.toml': toml('[targets.a]\nkind = "echo"\nprefx = "x"') });
    error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 3, col: 1 });
    expect(error.hint).toContain('did you mean "prefix"');
  });

  it('reports a TOML syntax error at its position', () => {
    const root = tempProject({ 'proctor.toml': '[store]\nurl = sqlite:x\n' });
    const error = inputError(() => loadProjectConfig(root, {}));
    expect(error.message).toMatch(/^invalid TOML/);
    expect(error.where?.file).toBe('proctor.toml');
    expect(error.where?.line).toBe(2);
    expect(error.where?.col).toBeGreaterThan(1);
  });

  it('reports an unset variable outside targets at its key', () => {
    const root = tempProject({ 'proctor.toml': toml(`[store]\n\nurl = "postgres://${ref('PGHOST')}/db"`) });
    const error = inputError(() => loadProjectConfig(root, {}));
    expect(error.where).toEqual({ file: 'proctor.toml', line: 3, col: 1 });
    expect(error.message).toContain('PGHOST');
    expect(error.hint).toContain('PGHOST');
  });
});
