// Writes schema/eval.schema.json from the built eval schema, for editors (yaml-language-server) and docs.
// Runs after `tsc` (npm run build), so it reads dist/ and never needs a TypeScript loader.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { evalJsonSchema } from '../dist/plan/eval-schema.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'schema', 'eval.schema.json');
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(evalJsonSchema(), null, 2)}\n`);
console.log(`wrote ${path.relative(root, out)}`);
