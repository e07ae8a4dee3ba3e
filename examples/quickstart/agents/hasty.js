// A hasty "agent": fast, and wrong in the ways hurried code is wrong.
import { readFileSync } from 'node:fs';

const task = readFileSync(0, 'utf8').trim();
const [verb, ...rest] = task.split(':');
const arg = rest.join(':').trim();

const answers = {
  reverse: () => [...arg].reverse().join(''),
  upper: () => arg.toUpperCase(),
  count: () => String(arg.length), // counts spaces and punctuation too
  sum: () => arg.split(/[ ,]+/).join('+'), // shows the working, never the answer
  json: () => `{name: ${arg}}`, // not JSON
  greet: () => `hi ${arg}`,
};

process.stdout.write(`${(answers[verb] ?? (() => `I cannot do "${verb}"`))()}\n`);
