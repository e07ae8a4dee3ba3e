import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type FakeModelServer, type FakeModelServerOptions, startFakeModelServer } from './fake-model-server.js';

/**
 * A fake model server for every test of the calling file, its log reset before each test. The object stands
 * in for the server, which exists only once the file's tests start.
 */
export const fakeModelForFile = (options: FakeModelServerOptions = {}): FakeModelServer => {
  let server: FakeModelServer | undefined;
  beforeAll(async () => {
    server = await startFakeModelServer(options);
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => server?.reset());
  return new Proxy({} as FakeModelServer, {
    get: (_, key) => {
      const started = server as FakeModelServer;
      const value: unknown = Reflect.get(started, key);
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
};
