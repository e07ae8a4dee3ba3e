// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${ENV} references under test, not templates.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { interpolateEnv, literalSecrets, redactTargetConfig } from '../../src/targets/secrets.js';

describe('redactTargetConfig', () => {
  it('replaces secret values and keeps header names', () => {
    const config = { base_url: 'http://x/v1', model: 'm', api_key: 'sk-live', headers: { 'x-key': 'k', 'x-org': 'o' } };
    expect(redactTargetConfig('openai', config)).toEqual({
      base_url: 'http://x/v1',
      model: 'm',
      api_key: '[redacted]',
      headers: { 'x-key': '[redacted]', 'x-org': '[redacted]' },
    });
    expect(config.api_key).toBe('sk-live');
  });

  it('leaves absent secrets absent and kinds without secrets alone', () => {
    expect(redactTargetConfig('openai', { model: 'm' })).toEqual({ model: 'm' });
    expect(redactTargetConfig('cli', { command: 'x' })).toEqual({ command: 'x' });
  });

  it('refuses an unknown kind rather than leak it', () => {
    expect(() => redactTargetConfig('nope' as 'cli', { api_key: 'k' })).toThrow(/unknown target kind/);
  });
});

describe('literalSecrets', () => {
  it('lists the values written at secret keys and header values, not ${VAR} references', () => {
    const config = { model: 'm', api_key: 'sk-literal', headers: { 'x-a': 'h-literal', 'x-b': 'Bearer ${TOKEN}' } };
    expect(literalSecrets('openai', config)).toEqual(['sk-literal', 'h-literal']);
    expect(literalSecrets('openai', { api_key: '${OPENAI_API_KEY}' })).toEqual([]);
    expect(literalSecrets('cli', { command: 'sk-literal' })).toEqual([]);
  });
});

describe('interpolateEnv', () => {
  const env = { HOST: 'example.com', KEY: 'sk-1', EMPTY: '' };

  it('replaces references in every string, deeply, leaving keys and non-strings alone', () => {
    const value = { url: 'https://${HOST}/v1', n: 3, list: ['${KEY}', true], nested: { '${HOST}': 'x${KEY}y' } };
    expect(interpolateEnv(value, env)).toEqual({
      url: 'https://example.com/v1',
      n: 3,
      list: ['sk-1', true],
      nested: { '${HOST}': 'xsk-1y' },
    });
  });

  it('uses a default when unset or empty, like the shell', () => {
    expect(interpolateEnv('${MISSING:-fallback}', env)).toBe('fallback');
    expect(interpolateEnv('${EMPTY:-fallback}', env)).toBe('fallback');
    expect(interpolateEnv('[${EMPTY}]', env)).toBe('[]');
    expect(interpolateEnv('${HOST:-other}', env)).toBe('example.com');
  });

  it('keeps $${NAME} as a literal ${NAME}', () => {
    expect(interpolateEnv('echo $${HOME} ${HOST}', env)).toBe('echo ${HOME} example.com');
  });

  it('names the unset variable and where it was used', () => {
    let error: unknown;
    try {
      interpolateEnv({ targets: { gpt: { api_key: '${OPENAI_KEY}' } } }, env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toContain('OPENAI_KEY');
    expect((error as InputError).message).toContain('targets.gpt.api_key');
  });
});
