// A coding agent stand-in: it looks for any trace an earlier case could have left in its workspace, prints
// CLEAN or TRACE, then changes tracked, untracked and ignored files, the template's files and git refs.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const vars = JSON.parse(process.env.PROCTOR_VARS ?? '{}');
const me = vars.name ?? 'x';
const traces = [];
const read = (f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : null);
const walk = (d) =>
  fs
    .readdirSync(d, { withFileTypes: true })
    .flatMap((e) => (e.name === '.git' ? [] : e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
for (const f of walk('.')) if (f.includes('trace')) traces.push(`file ${f}`);
const expect = {
  'app/src/a.txt': 'a\n',
  'app/src/b.txt': 'b\n',
  'app/build/setup.txt': 'setup\n',
  'notes.md': 'notes\n',
  'keep.md': 'keep\n',
};
for (const [f, text] of Object.entries(expect)) if (read(f) !== text) traces.push(`${f} is ${JSON.stringify(read(f))}`);
const git = (...a) => execFileSync('git', ['-C', 'app', ...a], { encoding: 'utf8' }).trim();
const refs = git('for-each-ref', '--format=%(refname)');
if (refs.includes('trace')) traces.push(`refs ${refs}`);
// `ref: main` checks out detached at the baseline (setup's output committed on top of main).
if (git('log', '-1', '--format=%s').includes('trace')) traces.push('HEAD moved');
try {
  git('symbolic-ref', '-q', 'HEAD');
  traces.push('HEAD on a branch');
} catch {}

fs.appendFileSync('app/src/a.txt', `${me}\n`);
fs.rmSync('app/src/b.txt');
fs.writeFileSync(`app/trace-${me}.txt`, me);
fs.mkdirSync('app/build/deep', { recursive: true });
fs.writeFileSync(`app/build/deep/trace-${me}.log`, me);
fs.writeFileSync('app/build/setup.txt', me);
fs.writeFileSync('notes.md', me);
fs.rmSync('keep.md');
fs.writeFileSync(`trace-${me}.log`, me);
fs.mkdirSync(`trace-dir-${me}`);
fs.writeFileSync(`trace-dir-${me}/x`, me);
git('checkout', '-q', '-b', `trace-${me}`);
git('-c', 'user.name=a', '-c', 'user.email=a@a', 'commit', '-qam', `trace ${me}`);
if (vars.break) fs.rmSync('app/.git', { recursive: true, force: true });
console.log(traces.length ? `TRACE ${traces.join('; ')}` : `CLEAN ${process.cwd()}`);
