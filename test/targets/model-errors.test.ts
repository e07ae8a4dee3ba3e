import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { ProctorError } from '../../src/errors.js';
import { classifyModelError, retryAfterMs } from '../../src/targets/model-errors.js';

const facts = { url: 'http://x/v1', timedOut: false };
const apiError = (statusCode: number | undefined, responseHeaders?: Record<string, string>) =>
  new APICallError({ message: 'm', url: 'http://x/v1', requestBodyValues: {}, statusCode, responseHeaders });

describe('retryAfterMs', () => {
  it('reads seconds, an HTTP date and retry-after-ms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs({ 'retry-after': '3' }, now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }, now)).toBe(5000);
    expect(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '3' }, now)).toBe(250);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });
});

describe('classifyModelError', () => {
  it('classifies by status, not by message', () => {
    expect(classifyModelError(apiError(429, { 'retry-after': '1' }), facts)).toMatchObject({
      kind: 'rate_limited',
      detail: { retryAfterMs: 1000 },
    });
    expect(classifyModelError(apiError(502), facts).kind).toBe('http_5xx');
    expect(classifyModelError(apiError(200), facts).kind).toBe('malformed_output');
    expect(classifyModelError(apiError(404), facts).kind).toBe('internal');
    expect(classifyModelError(apiError(undefined), facts).kind).toBe('network');
  });

  it('calls anything after our own timer a timeout', () => {
    expect(classifyModelError(new Error('aborted'), { ...facts, timedOut: true, timeoutMs: 5 }).kind).toBe('timeout');
  });

  it('finds a socket error code in the cause chain', () => {
    const reset = Object.assign(new Error('other side closed'), { code: 'ECONNRESET' });
    const error = classifyModelError(new TypeError('terminated', { cause: reset }), facts);
    expect(error).toBeInstanceOf(ProctorError);
    expect(error.kind).toBe('network');
  });
});
