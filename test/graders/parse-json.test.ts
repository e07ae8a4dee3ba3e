import { describe, expect, it } from 'vitest';
import { parseJson } from '../../src/graders/parse-json.js';

describe('parseJson', () => {
  it('parses JSON', () => {
    expect(parseJson(' {"a":[1]} ')).toEqual({ ok: true, value: { a: [1] } });
  });

  it('does not echo a long output back in its error', () => {
    const parsed = parseJson(`x${'y'.repeat(10_000)}`);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toBe("Unexpected token 'x'");
  });
});
