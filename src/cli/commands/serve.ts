import { spawn } from 'node:child_process';
import { loadProjectConfig } from '../../plan/config.js';
import { startExplorer } from '../../server/serve.js';
import { openStore } from '../../store/open.js';
import { signalExitCode } from '../signals.js';

export interface ServeFlags {
  port?: number;
  host?: string;
  open?: boolean;
  token?: string;
}

/** `proctor serve`: the explorer over the project's store, until SIGINT or SIGTERM. */
export const serveCommand = async (flags: ServeFlags): Promise<number> => {
  const config = loadProjectConfig(process.cwd(), process.env);
  const token = flags.token ?? process.env.PROCTOR_SERVE_TOKEN;
  const store = await openStore(config.store);
  try {
    const explorer = await startExplorer(store, config, process.env, {
      port: flags.port ?? 4173,
      host: flags.host ?? '127.0.0.1',
      ...(token ? { token } : {}),
    });
    process.stdout.write(`Proctor explorer on ${explorer.url}  (Ctrl-C to stop)\n`);
    if (flags.open) {
      const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
      spawn(opener, [explorer.url], { stdio: 'ignore', detached: true })
        .on('error', () => process.stderr.write(`could not open a browser; visit ${explorer.url}\n`))
        .unref();
    }
    const signal = await new Promise<'SIGINT' | 'SIGTERM'>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    await explorer.close();
    return signalExitCode(signal);
  } finally {
    await store.close();
  }
};
