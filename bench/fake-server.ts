// Runs the fake model server in its own process, so a benchmark measures Proctor and not the server.
//   npx tsx bench/fake-server.ts --port 8787 --latency-ms 50
// Prints the base URL (…/v1) as its first stdout line; stops on SIGINT or SIGTERM.
import { parseArgs } from 'node:util';
import { startFakeModelServer } from '../test/support/fake-model-server.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    port: { type: 'string', default: '0' },
    'latency-ms': { type: 'string', default: '0' },
    'prompt-tokens': { type: 'string' },
    'completion-tokens': { type: 'string' },
  },
});

const usage =
  values['prompt-tokens'] !== undefined || values['completion-tokens'] !== undefined
    ? {
        prompt_tokens: Number(values['prompt-tokens'] ?? 0),
        completion_tokens: Number(values['completion-tokens'] ?? 0),
      }
    : undefined;

const server = await startFakeModelServer({
  port: Number(values.port),
  latencyMs: Number(values['latency-ms']),
  recordPayloads: false,
  ...(usage ? { usage } : {}),
});
process.stdout.write(`${server.url}\n`);

const stop = async (): Promise<void> => {
  process.stderr.write(`fake server: ${server.requests.length} requests, peak in flight ${server.peakInFlight}\n`);
  await server.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
