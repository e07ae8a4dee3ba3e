// A separate process that owns runs: it opens the SQLite store, creates a LocalRunner, submits runs and
// follows them, so tests can see two real processes share one store (and SIGKILL one of them).
// Run with `node --import tsx test/support/runner-host.ts '<HostConfig JSON>'`. It prints one JSON event per
// line and reads commands from stdin: `cancel RUN_ID`, `start`. It exits once every run it submitted is terminal.
import { createInterface } from 'node:readline';
import { LocalRunner } from '../../src/runners/local.js';
import { currentOwner } from '../../src/runners/owner.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { isTerminal } from '../../src/store/store.js';
import { echoRun } from './echo-run.js';

export interface HostConfig {
  store: string;
  workers: number;
  heartbeatMs: number;
  leaseMs: number;
  cancelPollMs: number;
  /** Record this host name as the owner's, to play a process on another machine. */
  ownerHost?: string;
  runs: { runId: string; delayMs: number }[];
}

export type HostEvent =
  | { event: 'submitted'; pid: number }
  | { event: 'started' }
  | { event: 'cancel'; runId: string; result: boolean }
  | { event: 'done'; runs: Record<string, string> };

const emit = (e: HostEvent): void => {
  process.stdout.write(`${JSON.stringify(e)}\n`);
};

const config = JSON.parse(process.argv[2] ?? '{}') as HostConfig;
const store = await openSqliteStore(config.store);
const runner = new LocalRunner(store, {
  workers: config.workers,
  heartbeatMs: config.heartbeatMs,
  leaseMs: config.leaseMs,
  cancelPollMs: config.cancelPollMs,
  ...(config.ownerHost ? { owner: { ...currentOwner(), host: config.ownerHost } } : {}),
});
await runner.submitMany(config.runs.map((r) => echoRun({ runId: r.runId, delayMs: r.delayMs, groupId: 'host' })));
emit({ event: 'submitted', pid: process.pid });

const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const [command, runId = ''] = line.trim().split(/\s+/);
  if (command === 'start') void runner.start().then(() => emit({ event: 'started' }));
  if (command === 'cancel') void runner.cancel(runId).then((result) => emit({ event: 'cancel', runId, result }));
});

for (;;) {
  const runs = await Promise.all(config.runs.map((r) => store.getRun(r.runId)));
  if (runs.every((r) => r && isTerminal(r.status))) {
    emit({ event: 'done', runs: Object.fromEntries(runs.map((r) => [r?.runId, r?.status])) });
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}
commands.close();
await runner.stop();
await store.close();
