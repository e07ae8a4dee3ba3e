// The store's own cost per eval case on the local runner's write path (issue: performance), without a model,
// a plan or a bundle: what `bench/suite` measures with everything else around it.
//   npx tsx bench/store-writes.ts [--cases 5000] [--concurrency 50] [--latency-ms 50] [--dir /dev/shm] [--store URL]
//   [--wal-pages]
// Runs are created a window at a time as `eval run` submits them; each case then claims its run, waits the
// model's latency, and finishes with its result (payloads shaped like bench/suite's; an eval case journals only
// its resources, and these make none). Prints the process's CPU per case, the time SQLite spent per statement kind (when
// the store is SQLite) and the store's bytes per case; --wal-pages adds the WAL frames its commits wrote, per case
// and by the table or index they changed (wal-pages.ts). Runs against the built store in dist/.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { root } from './support.js';
import { keepWal, walPages } from './wal-pages.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '50' },
    'latency-ms': { type: 'string', default: '50' },
    dir: { type: 'string', default: '/dev/shm' },
    store: { type: 'string' },
    'wal-pages': { type: 'boolean', default: false },
  },
});
const n = Number(values.cases);
const j = Number(values.concurrency);
const latencyMs = Number(values['latency-ms']);

type JsonObject = import('../src/records.js').JsonObject;
type StoreModule = typeof import('../src/store/open.js');
type EngineModule = typeof import('../src/engine/record-case.js');
const { openStore } = (await import(join(root, 'dist', 'store', 'open.js'))) as StoreModule;
const { recordCase } = (await import(join(root, 'dist', 'engine', 'record-case.js'))) as EngineModule;

// SQLite's own CPU time per statement kind: better-sqlite3 runs each statement synchronously on this thread
// (CPU, not wall time: the machine is shared, and a statement preempted midway would count the wait).
const sqliteTime = new Map<string, { count: number; us: number }>();
const { default: BetterSqlite3 } = await import('better-sqlite3');
{
  const probe = new BetterSqlite3(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<'run' | 'all', (...a: unknown[]) => unknown>;
  probe.close();
  for (const method of ['run', 'all'] as const) {
    const original = proto[method];
    proto[method] = function (this: { source: string }, ...args: unknown[]) {
      const started = process.cpuUsage();
      try {
        return original.apply(this, args);
      } finally {
        const kind = this.source.split(' ').slice(0, 3).join(' ');
        const t = sqliteTime.get(kind) ?? { count: 0, us: 0 };
        const used = process.cpuUsage(started);
        t.count++;
        t.us += used.user + used.system;
        sqliteTime.set(kind, t);
      }
    };
  }
}

const dir = mkdtempSync(join(values.dir, 'proctor-store-writes-'));
const file = values.store ? undefined : join(dir, 'proctor.db');
const url = values.store ?? `sqlite:${file}`;
const countWal = values['wal-pages'] && file !== undefined;
if (countWal) keepWal(BetterSqlite3);
const store = await openStore({ url });
const groupId = `bench-${Date.now()}`;
const owner = { host: 'bench', pid: process.pid, startedAt: Date.now() };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const words = 'alpha harbour quartz lantern meadow cipher orbit velvet granite ember willow signal prism'.split(' ');
const phrase = (seed: number, length: number): string =>
  Array.from({ length }, (_, i) => words[(seed * 7 + i * 13) % words.length]).join(' ');

const caseOf = (i: number) => {
  const prompt = `Ticket REF-${i} from ${phrase(i, 3)} about ${phrase(i * 3, 3)}: ${phrase(i * 5, 12 + (i % 30))}`;
  const identity = { eval: 'suite.eval.yaml', test: `t${i}`, prompt: 'p1', target: 'openai', sample: 0 };
  // Keys are hashes, as a plan's are: their order is not the submit order.
  const key = createHash('sha256').update(`${groupId}:${i}`).digest('hex').slice(0, 20);
  return { prompt, text: `echo: ${prompt}`, identity, key };
};

const runIdOf = (i: number) => `${groupId}.${i + 1}`;
// As the local runner names them (ids.ts): run id, then task id.
const instanceOf = (key: string, i: number) => `${runIdOf(i)}@case:${key}`;

// CPU inside createRuns, from building its rows to its commit: on SQLite no other callback runs meanwhile.
let submitUs = 0;
const submit = async (from: number, to: number): Promise<void> => {
  const started = process.cpuUsage();
  await createRuns(from, to);
  const used = process.cpuUsage(started);
  submitUs += used.user + used.system;
};
const createRuns = (from: number, to: number) =>
  store.createRuns(
    Array.from({ length: to - from }, (_, k) => {
      const i = from + k;
      const c = caseOf(i);
      return {
        runId: runIdOf(i),
        groupId,
        taskId: `case:${c.key}`,
        instanceId: instanceOf(c.key, i),
        target: 'openai',
        caseKey: c.key,
        metadata: { identity: c.identity, bundle: '.proctor/results/x' },
        spec: {
          id: `case:${c.key}`,
          vars: { ref: `REF-${i}`, body: c.prompt },
          steps: [
            { id: 'prompt', type: 'prompt', config: { target: { label: 'openai', kind: 'openai' }, prompt: c.prompt } },
            { id: 'verify', type: 'verify', config: { verifierId: 'main', input: 'prompt', threshold: 1 } },
          ],
        } as JsonObject,
        context: {},
        owner,
      };
    }),
  );

const runCase = async (i: number): Promise<void> => {
  const c = caseOf(i);
  const startedAt = Date.now();
  if (!(await store.claimRun(runIdOf(i), owner, startedAt))) throw new Error(`claim refused: ${runIdOf(i)}`);
  await sleep(latencyMs);
  const usage = { inputTokens: 36, outputTokens: 38, costUsd: null, cacheReadTokens: 0, reasoningTokens: 0 };
  const summary = { text: c.text, prompt: c.prompt, usage, durationMs: latencyMs, target: 'openai' };
  const promptOutput = {
    ...summary,
    transcript: [
      { role: 'user', content: c.prompt },
      { role: 'assistant', content: c.text },
    ],
    process: null,
  };
  const verification = {
    score: 1,
    pass: true,
    threshold: 1,
    aggregate: 'weighted_average',
    results: [{ id: 'contains', weight: 1, required: false, pass: true, score: 1, reason: `contains REF-${i}` }],
  };
  const steps = [
    { id: 'prompt', output: promptOutput },
    { id: 'verify', output: verification },
  ];
  const fingerprint = c.key;
  const finish = recordCase(
    {
      runId: runIdOf(i),
      groupId,
      case: { key: c.key, attempt: 1, identity: c.identity, fingerprint, verifierId: 'main' },
    } as unknown as Parameters<typeof recordCase>[0],
    {
      status: 'COMPLETED',
      context: { outputs: { prompt: summary }, verifications: { main: verification } },
      error: null,
      steps: steps.map((s) => ({ stepId: s.id, status: 'completed', attempts: 1, output: s.output, error: null })),
      captures: {},
    } as unknown as Parameters<typeof recordCase>[1],
    startedAt,
  );
  if (!(await store.finishRun(runIdOf(i), finish, Date.now()))) throw new Error('finish refused');
};

const window = Math.max(2 * j, 100);
const cpu = process.cpuUsage();
const started = Date.now();
let submitted = 0;
let next = 0;
let done = 0;
const worker = async (): Promise<void> => {
  for (;;) {
    while (next >= submitted && submitted < n) await sleep(1);
    if (next >= n) return;
    const i = next++;
    await runCase(i);
    done++;
    if (submitted < n && submitted - done <= window / 2) {
      const to = Math.min(n, submitted + window / 2);
      const from = submitted;
      submitted = to;
      await submit(from, to);
    }
  }
};
submitted = Math.min(n, window);
await submit(0, submitted);
await Promise.all(Array.from({ length: j }, worker));
const used = process.cpuUsage(cpu);
const wallS = (Date.now() - started) / 1000;
// Taken before the reads below, which are not the write path's.
const timings = [...sqliteTime].map(([kind, t]) => [kind, { ...t }] as const);
const bytes = await store.sizeBytes();
const wal = countWal ? walPages(BetterSqlite3, file as string) : undefined;
await store.close();
const cpuMs = (used.user + used.system) / 1000;
process.stdout.write(
  `${n} cases, -j ${j}, ${latencyMs} ms: wall ${wallS.toFixed(2)} s (ideal ${((n * latencyMs) / j / 1000).toFixed(2)}), ` +
    `CPU ${(cpuMs / n).toFixed(3)} ms/case (createRuns ${(submitUs / n).toFixed(1)} us), store ${(bytes / 1024 / n).toFixed(2)} KB/case\n`,
);
let sqliteUs = 0;
const us = (total: number, per: number) => (total / per).toFixed(1).padStart(7);
for (const [kind, t] of timings.sort((a, b) => b[1].us - a[1].us)) {
  sqliteUs += t.us;
  if (t.us / n >= 0.5)
    process.stdout.write(
      `  ${us(t.us, n)} us/case ${String(t.count).padStart(7)} × ${us(t.us, t.count)} us  ${kind}\n`,
    );
}
if (sqliteUs > 0) process.stdout.write(`  ${us(sqliteUs, n)} us/case in SQLite\n`);
if (wal) {
  const per = (frames: number) => (frames / n).toFixed(2).padStart(6);
  process.stdout.write(`WAL: ${per(wal.frames)} frames/case, ${wal.commits} commits, by table or index:\n`);
  for (const [owner, frames] of wal.byOwner)
    if (frames / n >= 0.01) process.stdout.write(`  ${per(frames)} frames/case  ${owner}\n`);
}
rmSync(dir, { recursive: true, force: true });
