import { describe, expect, it } from 'vitest';
import { targetRefSchema } from '../../src/engine/target-ref.js';

const ref = (config: unknown) => ({ label: 'm', kind: 'openai', baseDir: '.', config });

describe('targetRefSchema', () => {
  it('passes a target config on as the same object, each time it is parsed', () => {
    const config = { base_url: 'http://127.0.0.1:1/v1', model: 'fake', headers: { 'x-a': 'b' } };
    expect(targetRefSchema.parse(ref(config)).config).toBe(config);
    expect(targetRefSchema.parse(ref(config)).config).toBe(config);
  });

  it('checks every other config object, however like one already checked', () => {
    targetRefSchema.parse(ref({ model: 'fake' }));
    const bad = targetRefSchema.safeParse(ref({ model: 'fake', extra: () => 1 }));
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['config', 'extra']);
    expect(targetRefSchema.safeParse(ref(['model'])).error?.issues[0]?.message).toContain('expected record');
  });
});
