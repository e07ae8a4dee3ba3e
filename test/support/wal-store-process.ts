// A process that fills a SQLite store's WAL until a checkpoint thread takes it over (wal-checkpointer.ts), closes the
// store, and only then says so: a close that let the process end before the thread's connection closed says nothing.
import { statSync } from 'node:fs';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { newRun } from './run-records.js';

const file = process.argv[2] as string;
const store = await openSqliteStore(file, { fromBytes: 256 * 1024, everyMs: 20, watchMs: 10 });
const empty = statSync(file).size;
for (let i = 0; statSync(file).size === empty; i++) {
  await store.createRuns(
    Array.from({ length: 50 }, (_, j) => ({ ...newRun(`r${i * 50 + j}`), spec: { text: 'x'.repeat(2_000) } })),
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await store.close();
process.stdout.write('closed\n');
