// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${ENV} references under test, not templates.
import { describe, expect, it } from 'vitest';
import { redact, runSecrets, storedRequest } from '../../src/engine/redact.js';
import type { TaskSpec } from '../../src/engine/task.js';

const task = (config: Record<string, string>): TaskSpec => ({
  id: 't',
  vars: {},
  steps: [{ id: 's', type: 'exec', config }],
});

describe('runSecrets', () => {
  const env = { MY_API_KEY: 'sk-env-key', PLAIN: 'plain-value', REFERENCED: 'ref-value', SHORT_TOKEN: 'abc' };

  it('takes credential-named variables and ${VAR} references, never short values, longest first', () => {
    const secrets = runSecrets(env, { task: task({ command: 'x', env: '${REFERENCED:-d}' }), metadata: {} });
    expect(secrets).toEqual(['sk-env-key', 'ref-value']);
  });

  it('takes --set and --seed values given under a credential name, whatever the environment holds', () => {
    const metadata = {
      user_overrides: { password: 'typed-password', label: 'not-a-secret' },
      seeds: { index: '0', api_token: 'seeded-token' },
    };
    expect(runSecrets({}, { task: task({ command: 'x' }), metadata }).sort()).toEqual([
      'seeded-token',
      'typed-password',
    ]);
  });
  it('takes the secrets a target config holds literally for every case that shares the config, and its judges', () => {
    const config = { model: 'm', api_key: 'sk-literal-key', headers: { 'x-token': 'header-secret' } };
    const prompt = (label: string): TaskSpec => ({
      id: label,
      vars: {},
      steps: [
        { id: 'prompt', type: 'prompt', config: { target: { label, kind: 'openai', config, baseDir: '.' } } },
        {
          id: 'verify',
          type: 'verify',
          config: { judges: { j: { label: 'j', kind: 'anthropic', config, baseDir: '.' } } },
        },
      ],
    });
    for (const label of ['a', 'b'])
      expect(runSecrets({}, { task: prompt(label), metadata: {} })).toEqual(['sk-literal-key', 'header-secret']);
  });
});

describe('redact', () => {
  const secrets = ['sk-longer-secret', 'sk-longer'];

  it('replaces secrets in strings and keys, deeply, the longer secret whole', () => {
    expect(redact({ a: ['x sk-longer-secret y', 1], 'sk-longer': { b: 'sk-longer!' } }, secrets)).toEqual({
      a: ['x [redacted] y', 1],
      '[redacted]': { b: '[redacted]!' },
    });
  });

  it('returns a value without secrets as itself, and copies only what changes', () => {
    const clean = { a: ['x', { b: 'y' }], n: 1 };
    expect(redact(clean, secrets)).toBe(clean);
    const mixed = { clean, dirty: ['sk-longer'] };
    const out = redact(mixed, secrets);
    expect(out).not.toBe(mixed);
    expect(out.clean).toBe(clean);
    expect(mixed.dirty).toEqual(['sk-longer']);
  });

  it('keeps the order of keys, and a `__proto__` key of user data as a plain property', () => {
    const vars = JSON.parse('{"first":"a","__proto__":{"x":"sk-longer"},"last":"sk-longer"}') as object;
    const out = redact(vars, secrets);
    expect(Object.keys(out)).toEqual(['first', '__proto__', 'last']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"first":"a","__proto__":{"x":"[redacted]"},"last":"[redacted]"}');
  });
});

describe('storedRequest', () => {
  it('redacts the task, metadata and context as stored, leaving the request itself intact', () => {
    const req = {
      task: task({ command: 'echo sk-env-key' }),
      metadata: { user_overrides: { token: 'sk-env-key' } },
      context: { outputs: { s: { text: 'sk-env-key' } } },
    };
    const stored = storedRequest(req, runSecrets({ OPENAI_API_KEY: 'sk-env-key' }, req));
    expect(JSON.stringify(stored)).not.toContain('sk-env-key');
    expect(stored.metadata).toEqual({ user_overrides: { token: '[redacted]' } });
    expect(req.task.steps[0]?.config.command).toBe('echo sk-env-key');
  });
});
