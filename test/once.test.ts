import { describe, expect, it } from 'vitest';
import { once } from '../src/once.js';

describe('once', () => {
  it('makes its value on the first call, not before, and only then', () => {
    let made = 0;
    const value = once(() => {
      made++;
      return { made };
    });
    expect(made).toBe(0);
    const first = value();
    expect(value()).toBe(first);
    expect(made).toBe(1);
  });

  it('keeps a value that is undefined, without making it again', () => {
    let made = 0;
    const value = once(() => {
      made++;
      return undefined;
    });
    expect(value()).toBeUndefined();
    expect(value()).toBeUndefined();
    expect(made).toBe(1);
  });
});
