import { describe, expect, it } from 'vitest';
import { CanceledError } from '../../src/errors.js';
import { echo } from '../../src/targets/echo.js';

const context = { baseDir: '.', env: {} };

describe('echo target', () => {
  it('returns the prompt with its prefix and zero usage', async () => {
    const target = echo.create(echo.config().parse({ prefix: '> ' }), context);
    const out = await target.invoke({ prompt: 'hi', vars: {} }, new AbortController().signal);
    expect(out.text).toBe('> hi');
    expect(out.usage).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
    expect(out.transcript).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '> hi' },
    ]);
  });

  it('waits delay_ms', async () => {
    const target = echo.create(echo.config().parse({ delay_ms: 60 }), context);
    const out = await target.invoke({ prompt: 'slow', vars: {} }, new AbortController().signal);
    expect(out.text).toBe('slow');
    expect(out.durationMs).toBeGreaterThanOrEqual(50);
  });

  it('stops waiting with CanceledError when the signal aborts', async () => {
    const target = echo.create(echo.config().parse({ delay_ms: 10_000 }), context);
    const controller = new AbortController();
    const call = target.invoke({ prompt: 'x', vars: {} }, controller.signal);
    setTimeout(() => controller.abort(), 20);
    await expect(call).rejects.toBeInstanceOf(CanceledError);
  });
});
