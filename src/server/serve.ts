import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { InputError } from '../errors.js';
import type { Env } from '../plan/env.js';
import { resultsDir } from '../plan/select-bundle.js';
import type { ProjectConfig } from '../plan/spec.js';
import type { Store } from '../store/store.js';
import { explorerApp } from './app.js';
import { indexBundles } from './bundle-index.js';
import { allowedHosts, isLoopback } from './security.js';
import { stopStartedRuns } from './start-run.js';

export interface ServeOptions {
  port: number;
  host: string;
  token?: string;
  /** How often a live stream reads the store (ms). */
  pollMs?: number;
}

export interface RunningExplorer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the explorer over `store`. Any bind but loopback must carry a token: otherwise everyone who can reach
 * the address could read every run and start or cancel runs.
 */
export const startExplorer = async (
  store: Store,
  config: ProjectConfig,
  env: Env,
  options: ServeOptions,
): Promise<RunningExplorer> => {
  if (!isLoopback(options.host) && !options.token)
    throw new InputError(
      `--host ${options.host} exposes the explorer beyond this machine, and no token protects it`,
      undefined,
      'pass --token T (or set PROCTOR_SERVE_TOKEN), or leave --host at 127.0.0.1',
    );
  const csrf = randomBytes(24).toString('base64url');
  const bundles = await indexBundles(resultsDir(config), store);
  // The Host allowlist needs the real port, known only once bound when 0 was asked for; until then it is empty.
  const hosts = new Set<string>();
  const app = explorerApp(
    { store, ...(bundles ? { bundles } : {}), config, env, events: { pollMs: options.pollMs ?? 250 } },
    { hosts, csrf, ...(options.token ? { token: options.token } : {}) },
  );
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, (info: AddressInfo) => {
      for (const h of allowedHosts(options.host, info.port)) hosts.add(h);
      resolve(s as Server);
    });
    s.once('error', reject);
  }).catch(async (error: unknown) => {
    await bundles?.close();
    throw error;
  });
  const { port } = server.address() as AddressInfo;
  const shown = isLoopback(options.host) ? '127.0.0.1' : options.host;
  return {
    url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        stopStartedRuns();
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => bundles?.close()),
  };
};
