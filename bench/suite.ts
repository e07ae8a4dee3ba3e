// Proctor's cost on a suite shaped like a real one (issue: performance).
//   npx tsx bench/suite.ts [--cases 1000,5000] [--concurrency 50,200] [--latency-ms 50] [--dir DIR] [--cpu-prof]
//   [--gc] [--keep] [--repeat K]
// N distinct tests of suite-shape.ts's shape (each its own vars and two assertions, one in 20 failing), against the
// fake model server in its own process.
// For each N × J it runs `proctor eval run -j J` in a fresh project and prints one row: wall time against the
// ideal (N × latency ÷ J), Proctor's CPU per case (its process and children, not the server's), peak RSS, and
// the size of the results bundle and of the store, the start: from the process's spawn to its first case starting
// (the earliest `started_at` in index.jsonl), what start-up and planning cost before the model is called, and the
// tail: from the last case finishing (the latest `finished_at`) to the process's exit, what the end of a run
// (summary, report) costs; and the median and 99th percentile of the cases' durations (`p50 ms`, `p99 ms`).
// Before each run, `floor s` is what the server and the machine allow any client: the same N prompts sent J at a
// time by Proctor's HTTP client alone (src/targets/http-fetch.ts, in this process), from the first request to the
// last reply. Under load the fake server's replies come later than its latency (it shares the cores), so
// `wall/floor` is Proctor's own share: its start, its end, and what its work per case delays the replies.
// `late ms/case` is the CPU per case while the run's second half committed (from half of its cases to 95%, by CPU read
// every 100 ms against the results' commit times in the store): a case's cost once the run is under way and its code
// warm, without start-up, planning, the first cases and the end.
// `floor cpu` is the CPU per case of floor-eval.js on the same project, run just before: the least a durable eval of
// this suite costs here (Node's start, the requests, the rows committed to SQLite and appended to a file, nothing
// else); `cpu/floor` is Proctor's CPU against it, a ratio that moves less from machine to machine than either.
// Before the table, `node alone`: the CPU of `node -e 0` here, which every row's process spends before Proctor runs,
// and what a page fault costs here; `faults/case` counts the run's (memory touched for the first time, mostly); and
// `a one-case run`: the CPU of a run of one case, Proctor's and floor-eval.js's, which every run spends whatever its
// size: at N cases, 1/N of it is in each case's `cpu ms/case`.
// --cpu-prof profiles the first cell and prints the top 15 functions by self time; its .cpuprofile files are kept.
// --gc then runs `proctor runs gc --older-than 0s` and adds the store's size per case after pruning the finished
// runs' step state. --keep leaves each project (its store and bundle) in place and prints where. --repeat K runs
// each cell K times, each in a fresh project, and prints each column's median, then the range of the CPU per case
// and of wall/ideal: one run's figures move by ±10% on a shared machine.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { httpRequest } from '../src/targets/http-fetch.js';
import { writeSuite } from './suite-shape.js';
import { cli, median, root, startFakeServer, type TimedRun, timeFreshEvalRun, timeProctor } from './support.js';

/** The least a durable eval of this suite costs (floor-eval.js), run as a CLI in each cell's project. */
const floorEval = join(root, 'bench', 'floor-eval.js');

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '1000,5000' },
    concurrency: { type: 'string', default: '50,200' },
    'latency-ms': { type: 'string', default: '50' },
    // The project (store and bundle) lives here; /dev/shm separates Proctor's cost from the disk's.
    dir: { type: 'string', default: tmpdir() },
    'cpu-prof': { type: 'boolean', default: false },
    gc: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    repeat: { type: 'string', default: '1' },
  },
});
const list = (s: string): number[] => s.split(',').map((x) => Number(x.trim()));
const caseCounts = list(values.cases);
const concurrencies = list(values.concurrency);
const latencyMs = Number(values['latency-ms']);
const repeat = Math.max(1, Number(values.repeat));

/** Seconds from the first request to the last reply: each prompt sent once, `j` in flight at a time. */
const floorSeconds = async (url: string, prompts: readonly string[], j: number): Promise<number> => {
  const endpoint = new URL(`${url}/chat/completions`);
  const headers = { 'content-type': 'application/json' };
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < prompts.length; i = next++) {
      const body = JSON.stringify({ model: 'fake', messages: [{ role: 'user', content: prompts[i] }] });
      const reply = await httpRequest(endpoint, { method: 'POST', headers, body });
      if (reply.status !== 200) throw new Error(`fake server answered ${reply.status}`);
      JSON.parse(reply.body.toString('utf8'));
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(j, prompts.length) }, lane));
  return (performance.now() - started) / 1000;
};

const bytes = (path: string): number => {
  try {
    const s = statSync(path);
    if (!s.isDirectory()) return s.size;
    return readdirSync(path).reduce((sum, name) => sum + bytes(join(path, name)), 0);
  } catch {
    return 0; // absent (e.g. a WAL already checkpointed away)
  }
};

/** Top self-time functions over every .cpuprofile in `profDir` (a worker thread writes its own). */
const topSelfTime = (profDir: string, count: number): string[] => {
  const self = new Map<string, number>();
  let total = 0;
  for (const file of readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as {
      nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
      samples: number[];
      timeDeltas: number[];
    };
    const names = new Map<number, string>();
    for (const { id, callFrame: f } of profile.nodes) {
      const url = f.url.startsWith('file://') ? relative(root, new URL(f.url).pathname) : f.url;
      names.set(id, `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim());
    }
    profile.samples.forEach((id, i) => {
      const us = profile.timeDeltas[i] ?? 0;
      const name = names.get(id) ?? '?';
      if (name === '(idle)') return; // waiting on I/O, not CPU
      self.set(name, (self.get(name) ?? 0) + us);
      total += us;
    });
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(
      ([name, us]) =>
        `${(us / 1000).toFixed(0).padStart(8)} ms ${((us / total) * 100).toFixed(1).padStart(5)}%  ${name}`,
    );
};

/**
 * When a bundle's first case started and its last finished, in ms since the epoch, and the median and 99th
 * percentile of its cases' durations, by its index's rows. A p99 far above the p50 is a stall: every case in flight
 * waited on the same thing (a checkpoint held the main thread ~325 ms once: p99 402 ms against a p50 of 57).
 */
const caseTimes = (bundle: string): { firstStarted: number; lastFinished: number; p50: number; p99: number } => {
  let [firstStarted, lastFinished] = [Number.POSITIVE_INFINITY, 0];
  const durations: number[] = [];
  for (const line of readFileSync(join(bundle, 'index.jsonl'), 'utf8').split('\n')) {
    if (!line) continue;
    const row = JSON.parse(line) as { started_at: string; finished_at: string; duration_ms: number };
    firstStarted = Math.min(firstStarted, Date.parse(row.started_at));
    lastFinished = Math.max(lastFinished, Date.parse(row.finished_at));
    durations.push(row.duration_ms);
  }
  durations.sort((a, b) => a - b);
  const at = (q: number): number => durations[Math.min(durations.length - 1, Math.floor(durations.length * q))] ?? 0;
  return { firstStarted, lastFinished, p50: at(0.5), p99: at(0.99) };
};

/** CPU ms per case from half of the run's cases committed to 95% of them (undefined when too few samples fall between). */
const lateMsPerCase = (store: string, samples: TimedRun['cpuSamples']): number | undefined => {
  const db = new Database(store, { readonly: true });
  const committed = db
    .prepare('select committed_at as at from results order by committed_at')
    .pluck()
    .all() as number[];
  db.close();
  const [from, to] = [committed[Math.floor(committed.length / 2)], committed[Math.floor(committed.length * 0.95)]];
  if (from === undefined || to === undefined) return undefined;
  // The samples nearest inside the span, and the cases committed between them.
  const first = samples.find((s) => s.atMs >= from);
  const last = samples.findLast((s) => s.atMs <= to);
  if (!first || !last || last.atMs <= first.atMs) return undefined;
  const cases = committed.filter((at) => at > first.atMs && at <= last.atMs).length;
  return cases > 0 ? ((last.cpuS - first.cpuS) * 1000) / cases : undefined;
};

const columns = ['N', 'J', 'wall s', 'ideal s', 'wall/ideal', 'floor s', 'wall/floor', 'cpu ms/case', 'late ms/case'];
columns.push(
  'floor cpu',
  'cpu/floor',
  'sys ms/case',
  'faults/case',
  'rss MB',
  'start ms',
  'tail ms',
  'p50 ms',
  'p99 ms',
  'bundle MB',
  'KB/case',
  'store MB',
);
columns.push('KB/case');
columns.push('passed', 'exit');
if (values.gc) columns.push('gc KB/case');
const widths = columns.map((c) => Math.max(c.length, 8));
const row = (cells: (string | number)[]): string => cells.map((c, i) => String(c).padStart(widths[i] ?? 8)).join(' ');

/**
 * CPU ms of `node -e 0` on this machine (median of 5, to /usr/bin/time's 10 ms): what every row's process spends
 * before Proctor's first line runs. NODE_EXTRA_CA_CERTS makes Node 20 read the system's CA certificates and the
 * extra ones at each start (~50 ms here: 15% of a 1,000-case run's instructions, valgrind), whatever the process does.
 */
const nodeStartMs = (): number =>
  median(
    Array.from({ length: 5 }, () => {
      const timed = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, '-e', '0'], { encoding: 'utf8' });
      const [user = 0, sys = 0] = (timed.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
      return (user + sys) * 1000;
    }),
  );

/**
 * CPU µs a page fault costs on this machine: a process touching 64 MB of fresh memory, a page at a time (median of
 * 3). A run's every page of memory is one, the first time it is touched: typically under a microsecond on bare metal,
 * ~12 µs on the virtual machines these figures were taken on, where `faults/case` is then a good part of `cpu ms/case`.
 */
const pageFaultUs = (): number =>
  median(
    Array.from({ length: 3 }, () => {
      const touch =
        'const n=64*2**20,b=Buffer.allocUnsafeSlow(n),c=process.cpuUsage();for(let i=0;i<n;i+=4096)b[i]=1;' +
        'const u=process.cpuUsage(c);console.log((u.user+u.system)/(n/4096))';
      return Number(spawnSync(process.execPath, ['-e', touch], { encoding: 'utf8' }).stdout);
    }),
  );

const server = await startFakeServer(latencyMs);
// One case first, so that every row finds `eval run`'s code cache (bin/proctor.js) as a user's every run but the
// first after an install does, made by a run of this kind.
const warm = mkdtempSync(join(values.dir, 'proctor-suite-'));
writeSuite(warm, 1, server.url);
await timeFreshEvalRun(warm, cli);

/**
 * CPU ms of a one-case run (median of 5, each into a fresh store and bundle) of `bin`: what a run costs whatever its
 * size (Node's start, loading, opening the store, the report), a part of each case's CPU that falls as 1/N.
 */
const oneCaseMs = async (bin: string): Promise<number> => {
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) runs.push((await timeFreshEvalRun(warm, bin)).cpuS * 1000);
  return median(runs);
};
const [proctorOne, floorOne] = [await oneCaseMs(cli), await oneCaseMs(floorEval)];
rmSync(warm, { recursive: true, force: true });
const certs = process.env.NODE_EXTRA_CA_CERTS ? ', NODE_EXTRA_CA_CERTS set: Node reads every CA certificate' : '';
process.stdout.write(`latency ${latencyMs} ms, project under ${values.dir}\n`);
process.stdout.write(`node alone (node -e 0): ${nodeStartMs().toFixed(0)} ms of CPU per start${certs}\n`);
process.stdout.write(`a page fault: ${pageFaultUs().toFixed(1)} µs of CPU (touching fresh memory)\n`);
process.stdout.write(
  `a one-case run: ${proctorOne.toFixed(0)} ms of CPU (floor-eval.js: ${floorOne.toFixed(0)} ms), ` +
    `${(proctorOne / 1000).toFixed(3)} ms of each case's CPU at 1,000 cases\n`,
);
process.stdout.write(`${row(columns)}\n`);
let profDir: string | undefined;

/** One run of a cell in a fresh project: its row's cells, each a number where the column is a figure. */
const measureCell = async (n: number, j: number): Promise<(number | string)[]> => {
  const dir = mkdtempSync(join(values.dir, 'proctor-suite-'));
  try {
    const floor = await floorSeconds(server.url, writeSuite(dir, n, server.url), j);
    const floorRun = await timeProctor(dir, ['eval', 'run', '-q', '-j', String(j)], [], undefined, floorEval);
    rmSync(join(dir, '.proctor'), { recursive: true, force: true });
    const nodeArgs: string[] = [];
    if (values['cpu-prof'] && profDir === undefined) {
      profDir = mkdtempSync(join(tmpdir(), 'proctor-suite-prof-'));
      nodeArgs.push('--cpu-prof', '--cpu-prof-dir', profDir);
    }
    const spawnedAt = Date.now();
    const run = await timeProctor(dir, ['eval', 'run', '-q', '-j', String(j)], nodeArgs, 100);
    const exitedAt = Date.now();
    const ideal = (n * latencyMs) / j / 1000;
    const results = join(dir, '.proctor', 'results');
    const bundle = bytes(results);
    const storeBytes = (): number =>
      bytes(join(dir, '.proctor', 'proctor.db')) + bytes(join(dir, '.proctor', 'proctor.db-wal'));
    const store = storeBytes();
    const [runId] = readdirSync(results);
    const summary = JSON.parse(readFileSync(join(results, runId ?? '', 'summary.json'), 'utf8')) as {
      counts: { passed: number };
    };
    const mb = (b: number): number => b / 2 ** 20;
    const kbPerCase = (b: number): number => b / 1024 / n;
    const span = caseTimes(join(results, runId ?? ''));
    const late = lateMsPerCase(join(dir, '.proctor', 'proctor.db'), run.cpuSamples);
    const cells: (number | string)[] = [n, j, run.wallS, ideal, run.wallS / ideal, floor, run.wallS / floor];
    cells.push((run.cpuS * 1000) / n, late ?? '-', (floorRun.cpuS * 1000) / n, run.cpuS / floorRun.cpuS);
    cells.push((run.sysS * 1000) / n, run.minorFaults / n, run.peakRssMb);
    cells.push(span.firstStarted - spawnedAt, exitedAt - span.lastFinished, span.p50, span.p99);
    cells.push(mb(bundle), kbPerCase(bundle), mb(store), kbPerCase(store), summary.counts.passed, String(run.code));
    if (values.gc) {
      await timeProctor(dir, ['runs', 'gc', '--older-than', '0s']);
      cells.push(kbPerCase(storeBytes()));
    }
    // One test in 20 expects a wrong answer: a run that reports them exits 1 (any other exit is a run cut short).
    if (run.code !== 1)
      process.stdout.write(`  the run exited ${run.code}, not 1: its figures are not a whole run's\n`);
    return cells;
  } finally {
    if (values.keep) process.stdout.write(`kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
};

// Digits each column is printed with (the rest are counts).
const digits: Record<string, number> = {
  'wall s': 2,
  'ideal s': 2,
  'wall/ideal': 2,
  'floor s': 2,
  'wall/floor': 2,
  'cpu ms/case': 3,
  'late ms/case': 3,
  'floor cpu': 3,
  'cpu/floor': 2,
  'sys ms/case': 3,
  'faults/case': 1,
  'bundle MB': 1,
  'store MB': 1,
  'KB/case': 2,
  'gc KB/case': 2,
};
const formatted = (cells: readonly (number | string)[]): string[] =>
  cells.map((c, i) => {
    const places = digits[columns[i] ?? ''];
    return typeof c === 'number' && places !== undefined ? c.toFixed(places) : String(c);
  });

try {
  for (const n of caseCounts) {
    for (const j of concurrencies) {
      const runs: (number | string)[][] = [];
      for (let r = 0; r < repeat; r++) runs.push(await measureCell(n, j));
      // Each column's median over the repeats, on its own: the rows of a noisy machine differ by ±10%.
      const cells = (runs[0] ?? []).map((first, i) => {
        const column = runs.map((cellsOfRun) => cellsOfRun[i]);
        if (typeof first !== 'number' || column.some((v) => typeof v !== 'number'))
          return [...new Set(column)].join('/');
        return median(column as number[]);
      });
      process.stdout.write(`${row(formatted(cells))}\n`);
      if (repeat > 1) {
        // A column's lowest and highest figure over the runs, printed with the column's digits.
        const range = (column: string): string => {
          const xs = runs.map((cellsOfRun) => Number(cellsOfRun[columns.indexOf(column)]));
          return `${column} ${Math.min(...xs).toFixed(digits[column])}-${Math.max(...xs).toFixed(digits[column])}`;
        };
        process.stdout.write(`  ${repeat} runs: ${range('cpu ms/case')}, ${range('wall/ideal')}\n`);
      }
    }
  }
} finally {
  server.stop();
}
if (profDir !== undefined) {
  process.stdout.write(`\ntop 15 by self time, first cell (profiles in ${profDir}):\n`);
  process.stdout.write(`${topSelfTime(profDir, 15).join('\n')}\n`);
}
