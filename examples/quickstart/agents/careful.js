// A careful "agent": reads a task on stdin and answers it exactly.
import { readFileSync } from 'node:fs';

const task = readFileSync(0, 'utf8').trim();
const [verb, ...rest] = task.split(':');
const arg = rest.join(':').trim();

const answers = {
  reverse: () => [...arg].reverse().join(''),
  upper: () => arg.toUpperCase(),
  count: () => String(arg.replace(/[^a-z]/gi, '').length),
  sum: () => String(arg.split(/[ ,]+/).map(Number).reduce((a, b) => a + b, 0)),
  json: () => JSON.stringify({ name: arg, length: arg.length }),
  greet: () => `Hello, ${arg}! Nice to meet you.`,
};

process.stdout.write(`${(answers[verb] ?? (() => `I cannot do "${verb}"`))()}\n`);
