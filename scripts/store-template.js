// Writes dist/store-template.db, the file every new SQLite store starts as (src/store/sqlite.ts storeTemplate): a
// store made by the built openSqliteStore from its schema's statements, closed, so its WAL is folded into it and
// removed. Runs after `tsc` (npm run build), so it reads dist/ and never needs a TypeScript loader.
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStore, storeTemplate } from '../dist/store/sqlite.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const part = `${storeTemplate}.${process.pid}.new`;
rmSync(part, { force: true });
// Not from the last build's template: from the statements of this one.
const store = await openSqliteStore(part, undefined);
await store.close();
renameSync(part, storeTemplate);
console.log(`wrote ${path.relative(root, storeTemplate)}`);
