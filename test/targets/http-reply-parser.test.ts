import { describe, expect, it } from 'vitest';
import { HttpParseError, HttpReplyParser } from '../../src/targets/http-reply-parser.js';

/** Feeds `bytes` cut at `cuts`; returns the parser and whether the last push completed the response. */
const parse = (bytes: string, cuts: number[] = [], head = false) => {
  const parser = new HttpReplyParser(head);
  const data = Buffer.from(bytes, 'latin1');
  let done = false;
  let at = 0;
  for (const cut of [...cuts, data.length]) {
    done = parser.push(data.subarray(at, cut));
    at = cut;
  }
  return { parser, done };
};

const chunked =
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\n\r\n' +
  '4\r\nWiki\r\n5;name=value\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nExpires: never\r\n\r\n';

describe('HttpReplyParser', () => {
  it('reads a chunked body the same wherever the reads split it', () => {
    for (let cut = 1; cut < chunked.length; cut++) {
      for (const second of [cut, Math.min(chunked.length, cut + 7)]) {
        const { parser, done } = parse(chunked, [cut, second]);
        expect(done).toBe(true);
        expect(parser.body().toString()).toBe('Wikipedia in\r\n\r\nchunks.');
        expect(parser.reusable).toBe(true);
      }
    }
    expect(parse(chunked).parser.headers['set-cookie']).toEqual(['a=1', 'b=2']);
  });

  it('completes a content-length body at its length; bytes past it make the connection unusable', () => {
    const exact = parse('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nKeep-Alive: timeout=5\r\n\r\nabc', [20, 40]);
    expect([exact.done, exact.parser.body().toString(), exact.parser.reusable]).toEqual([true, 'abc', true]);
    expect(exact.parser.idleTimeoutMs).toBe(5000);
    const extra = parse('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1');
    expect([extra.done, extra.parser.reusable]).toEqual([true, false]);
  });

  it('ends a body without framing at the connection end, and keeps an HTTP/1.0 connection only when asked', () => {
    const open = parse('HTTP/1.0 200 OK\r\n\r\nuntil the end');
    expect(open.done).toBe(false);
    expect(open.parser.end()).toBe(true);
    expect([open.parser.body().toString(), open.parser.reusable]).toEqual(['until the end', false]);
    const kept = parse('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n');
    expect([kept.done, kept.parser.reusable]).toEqual([true, true]);
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab').parser.end()).toBe(false);
  });

  it('frames by the headers however they are written, and gives every header once asked, as node:http does', () => {
    const head =
      'HTTP/1.1 200 OK\r\nX-RateLimit-Remaining: 99\r\nCONTENT-LENGTH: 4\r\n  Keep-Alive : timeout=7\r\n' +
      'x-request-id: a\r\nX-Request-Id: b\r\nSet-Cookie: c=1\r\nConnection: Close\r\n\r\nbody';
    const { parser, done } = parse(head, [30]);
    expect([done, parser.body().toString(), parser.reusable, parser.idleTimeoutMs]).toEqual([
      true,
      'body',
      false,
      7000,
    ]);
    expect(parser.headers).toEqual({
      'x-ratelimit-remaining': '99',
      'content-length': '4',
      'keep-alive': 'timeout=7',
      'x-request-id': 'a, b',
      'set-cookie': ['c=1'],
      connection: 'Close',
    });
    // After an interim response, the final one's headers.
    const interim = parse('HTTP/1.1 100 Continue\r\nX-Early: 1\r\n\r\nHTTP/1.1 204 No Content\r\nX-Late: 2\r\n\r\n');
    expect([interim.done, interim.parser.status, interim.parser.headers]).toEqual([true, 204, { 'x-late': '2' }]);
  });

  it('names what is wrong with a reply that is not HTTP/1.x as Node does (HPE_*)', () => {
    const failure = (bytes: string): string => {
      try {
        parse(bytes);
      } catch (error) {
        expect(error).toBeInstanceOf(HttpParseError);
        return (error as HttpParseError).code;
      }
      return 'parsed';
    };
    expect(failure('HTTP/2 200\r\n\r\n')).toBe('HPE_INVALID_RESPONSE');
    expect(failure('HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n')).toBe('HPE_INVALID_RESPONSE');
    expect(failure('HTTP/1.1 200 OK\r\nno colon\r\n\r\n')).toBe('HPE_INVALID_RESPONSE');
    // A line no framing header could be is checked all the same.
    expect(failure('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nx-no-colon\r\n\r\n')).toBe('HPE_INVALID_RESPONSE');
    expect(failure('HTTP/1.1 200 OK\r\n: no name\r\n\r\n')).toBe('HPE_INVALID_RESPONSE');
    expect(failure('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n')).toBe('HPE_INVALID_CHUNK_SIZE');
    expect(failure('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n')).toBe('HPE_INVALID_CHUNK_SIZE');
    expect(failure(`HTTP/1.1 200 OK\r\nx: ${'y'.repeat(20_000)}`)).toBe('HPE_HEADER_OVERFLOW');
  });
});
