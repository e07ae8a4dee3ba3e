import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortPool, idleWhenDone } from '../src/abort-pool.js';
import { httpRequest } from '../src/targets/http-fetch.js';

describe('AbortPool', () => {
  it('hands a controller out again once its work is done and left no listener', () => {
    const pool = new AbortPool(4);
    const first = pool.take();
    const listener = (): void => {};
    first.controller.signal.addEventListener('abort', listener);
    first.controller.signal.removeEventListener('abort', listener);
    pool.give(first);
    const second = pool.take();
    expect(second.controller).toBe(first.controller);
    expect(second.uses).toBe(2);
  });

  it('drops an aborted controller: the next work gets a signal not aborted', () => {
    const pool = new AbortPool(4);
    const first = pool.take();
    first.controller.abort();
    pool.give(first);
    const second = pool.take();
    expect(second.controller).not.toBe(first.controller);
    expect(second.controller.signal.aborted).toBe(false);
  });

  it("drops a controller whose signal still holds its work's listener, and keeps one holding only idle ones", () => {
    const pool = new AbortPool(4);
    const left = pool.take();
    left.controller.signal.addEventListener('abort', () => {});
    pool.give(left);
    expect(pool.take().controller).not.toBe(left.controller);

    const idle = pool.take();
    idle.controller.signal.addEventListener(
      'abort',
      idleWhenDone(() => {}),
    );
    pool.give(idle);
    expect(pool.take().controller).toBe(idle.controller);
  });

  it('keeps at most its maximum, and retires a controller after 256 uses', () => {
    const pool = new AbortPool(1);
    const [a, b] = [pool.take(), pool.take()];
    pool.give(a);
    pool.give(b);
    expect(pool.take().controller).toBe(a.controller);
    expect(pool.take().controller).not.toBe(b.controller);

    const worn = pool.take();
    for (let i = 1; i < 256; i++) {
      pool.give(worn);
      expect(pool.take()).toBe(worn);
    }
    expect(worn.uses).toBe(256);
    pool.give(worn);
    expect(pool.take()).not.toBe(worn);
  });
});

describe('AbortPool with the HTTP client', () => {
  let server: Server;
  let url: URL;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('takes back a signal whose calls are settled, and its next work is aborted through it', async () => {
    const pool = new AbortPool(4);
    const first = pool.take();
    const reply = await httpRequest(url, { method: 'GET', headers: {}, signal: first.controller.signal });
    expect(reply.body.toString()).toBe('ok');
    pool.give(first);
    const second = pool.take();
    expect(second.controller).toBe(first.controller);
    // The client's listener, left on the signal, still fails a call of the next work when it aborts.
    const hanging = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const port = (hanging.address() as { port: number }).port;
      const call = httpRequest(new URL(`http://127.0.0.1:${port}/`), {
        method: 'GET',
        headers: {},
        signal: second.controller.signal,
      });
      second.controller.abort();
      await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });
});
