// A stand-in for a coding agent: reads the prompt on stdin, asks the URL it names, rewrites the file.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const prompt = readFileSync(0, 'utf8');
const url = prompt.match(/https?:\/\/\S+?(?=\s|$| returns)/)?.[0];
const workspace = process.env.PROCTOR_WORKSPACE ?? process.cwd();
const expected = url ? await (await fetch(url)).text() : 'hello world';
writeFileSync(join(workspace, 'greeting.txt'), `${expected}\n`);
console.log(`wrote greeting.txt: ${expected}`);
