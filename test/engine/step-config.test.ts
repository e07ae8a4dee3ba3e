import { describe, expect, it } from 'vitest';
import { builtConfig, stepConfig } from '../../src/engine/step-config.js';
import { steps } from '../../src/engine/steps/registry.js';

const verifyConfig = {
  verifierId: 'main',
  aggregate: 'weighted_average' as const,
  threshold: 1,
  baseDir: '.',
  test: 't',
  assert: [{ kind: 'contains' as const, negate: false, weight: 1, required: false, config: { value: 'x' } }],
  judges: {},
};

describe('stepConfig', () => {
  it('takes a config built in its output shape as it is', () => {
    const built = builtConfig(steps.verify, { ...verifyConfig });
    expect(stepConfig(steps.verify, built)).toBe(built);
  });

  it('parses any other config, applying its defaults and refusing what is invalid', () => {
    const { aggregate: _, ...written } = verifyConfig;
    const parsed = stepConfig(steps.verify, written);
    expect(parsed).not.toBe(written);
    expect(parsed.aggregate).toBe('weighted_average');
    expect(() => stepConfig(steps.verify, { ...written, threshold: 2 })).toThrow();
  });
});
