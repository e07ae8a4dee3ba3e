// The least a durable eval of bench/suite's suite costs on this machine (issue: performance): what `proctor eval run`
// must do for that suite, and nothing else, so that Proctor's CPU per case can be read against it.
//   node bench/floor-eval.js eval run -q [-j 50]          in a project bench/suite-shape.ts wrote (after npm run build)
//   npx tsx bench/ab.ts --cli bin/proctor.js --cli bench/floor-eval.js [--cases 1000]
// Node's start; the tests read and parsed once; per case its prompt rendered, one request on a keep-alive connection
// (Proctor's own HTTP client), the reply parsed, both assertions checked, and its row committed to SQLite (WAL,
// synchronous = NORMAL, commits gathered over 20 ms, as Proctor's store) and then appended to an index.jsonl. No
// config or test checks, no template engine, no plan, no engine, no journal, no identities, no progress or report:
// everything Proctor adds to this costs at least what it costs here. It reads only bench/suite's project: the
// target's base_url and the prompt from suite.eval.yaml by pattern, the tests from tests.jsonl. Exit 1 when a case
// failed, as `proctor eval run`. Plain JavaScript, run by node itself: tsx's loader would add its own start-up.
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { httpRequest } from '../dist/targets/http-fetch.js';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { 'max-concurrency': { type: 'string', short: 'j', default: '10' }, quiet: { type: 'boolean', short: 'q' } },
  allowPositionals: true,
});
const concurrency = Number(values['max-concurrency']);

const suite = readFileSync('suite.eval.yaml', 'utf8');
const baseUrl = /base_url: "([^"]+)"/.exec(suite)?.[1];
const prompt = /prompts: \["([^"]+)"\]/.exec(suite)?.[1];
if (!baseUrl || !prompt) throw new Error('suite.eval.yaml is not bench/suite-shape.ts suite');
const endpoint = new URL(`${baseUrl}/chat/completions`);
const headers = { 'content-type': 'application/json', authorization: 'Bearer bench' };
const tests = readFileSync('tests.jsonl', 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line));

mkdirSync('.proctor/floor', { recursive: true });
const index = join('.proctor', 'floor', 'index.jsonl');
const Database = createRequire(import.meta.url)('better-sqlite3');
const db = new Database(join('.proctor', 'floor.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('create table if not exists results (seq integer primary key, case_key text unique, outcome text, row text)');
const insert = db.prepare('insert into results (case_key, outcome, row) values (?, ?, ?)');
const commitRows = db.transaction((rows) => {
  for (const row of rows) insert.run(row.key, row.outcome, row.json);
});

let pending = [];
let commitTimer;
const commit = () => {
  commitTimer = undefined;
  const rows = pending;
  pending = [];
  commitRows(rows);
  appendFileSync(index, `${rows.map((row) => row.json).join('\n')}\n`);
};
const finish = (row) => {
  pending.push(row);
  commitTimer ??= setTimeout(commit, 20);
};

let failed = 0;
const runCase = async (test) => {
  const text = prompt.replace(/\{\{ (\w+) \}\}/g, (_, name) => test.vars[name]);
  const started = performance.now();
  const reply = await httpRequest(endpoint, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'fake', messages: [{ role: 'user', content: text }] }),
  });
  const body = JSON.parse(reply.body.toString('utf8'));
  const output = body.choices[0].message.content;
  const assertions = test.assert.map((a) => ({
    type: a.type,
    passed: a.type === 'contains' ? output.includes(a.value) : output === a.value,
  }));
  const passed = assertions.every((a) => a.passed);
  if (!passed) failed++;
  const outcome = passed ? 'passed' : 'failed';
  const row = { test: test.id, vars: test.vars, prompt: text, output, outcome, assertions, usage: body.usage };
  finish({ key: test.id, outcome, json: JSON.stringify({ ...row, durationMs: performance.now() - started }) });
};

let next = 0;
const lane = async () => {
  for (let i = next++; i < tests.length; i = next++) await runCase(tests[i]);
};
await Promise.all(Array.from({ length: Math.min(concurrency, tests.length) }, lane));
clearTimeout(commitTimer);
if (pending.length > 0) commit();
db.close();
process.exitCode = failed > 0 ? 1 : 0;
