// A script grader: reads the case as JSON on stdin, prints {pass, score, reason}.
import { readFileSync } from 'node:fs';

const input = JSON.parse(readFileSync(0, 'utf8'));
const expected = String(input.vars.numbers)
  .split(/[ ,]+/)
  .map(Number)
  .reduce((a, b) => a + b, 0);
const got = Number(input.output.trim());
const pass = got === expected;
process.stdout.write(JSON.stringify({ pass, score: pass ? 1 : 0, reason: `expected ${expected}, got ${input.output.trim()}` }));
