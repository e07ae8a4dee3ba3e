// A coding agent stand-in that tries to leave its solution behind in the repository itself, not in its files.
// It first prints what it can see of the repository (reflog, refs, every object, config, hooks, info, extra
// files under .git) so a test can compare what each case found; then it commits a solution, amends it, and
// leaves every trace git allows: a branch, an annotated tag, a stash, a note, a packed ref, a pack, an
// unreachable object, FETCH_HEAD and ORIG_HEAD, a config change, a hook, an info/exclude line.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const vars = JSON.parse(process.env.PROCTOR_VARS ?? '{}');
const me = `${vars.name ?? 'x'}-${Math.random().toString(36).slice(2)}`;
const repo = 'app';
const git = (...a) =>
  execFileSync('git', ['-C', repo, ...a], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'a',
      GIT_AUTHOR_EMAIL: 'a@a',
      GIT_COMMITTER_NAME: 'a',
      GIT_COMMITTER_EMAIL: 'a@a',
    },
  }).trim();
const gitDir = path.join(repo, '.git');
const filesUnder = (d) =>
  fs.existsSync(d)
    ? fs
        .readdirSync(d, { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile())
        .map((e) => path.relative(d, path.join(e.parentPath ?? e.path, e.name)))
        .sort()
    : [];
const hash = (s) => createHash('sha256').update(s).digest('hex').slice(0, 16);
const contents = (d) => Object.fromEntries(filesUnder(d).map((f) => [f, hash(fs.readFileSync(path.join(d, f)))]));

const allObjects = git('cat-file', '--batch-all-objects', '--batch-check');
const seen = {
  reflog: git('reflog', '--all', '--format=%H %gs'),
  refs: git('for-each-ref', '--format=%(objectname) %(refname)'),
  revList: git('rev-list', '--all'),
  objects: allObjects,
  unreachable: git('fsck', '--unreachable', '--no-reflogs', '--no-progress'),
  stash: git('stash', 'list'),
  config: fs.readFileSync(path.join(gitDir, 'config'), 'utf8'),
  hooks: contents(path.join(gitDir, 'hooks')),
  info: contents(path.join(gitDir, 'info')),
  gitFiles: fs.readdirSync(gitDir).sort(),
};
const blobs = execFileSync('git', ['-C', repo, 'cat-file', '--batch'], {
  input: allObjects
    .split('\n')
    .map((l) => l.split(' ')[0])
    .join('\n'),
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
const leaks = [];
if (blobs.includes('SOLUTION')) leaks.push('an earlier solution is readable from the object store');
for (const [what, text] of Object.entries(seen))
  if (/leak|solution/i.test(JSON.stringify(text))) leaks.push(`${what} has a trace`);
if (Object.keys(seen.hooks).some((h) => !h.endsWith('.sample'))) leaks.push('a hook was added');

fs.writeFileSync(`${repo}/solution.txt`, `SOLUTION ${me}\n`);
git('add', 'solution.txt');
git('commit', '-qm', `solution ${me}`);
fs.appendFileSync(`${repo}/solution.txt`, `SOLUTION amended ${me}\n`);
git('commit', '-qa', '--amend', '-m', `solution amended ${me}`);
git('branch', `leak-${me}`);
git('tag', '-a', '-m', `SOLUTION tag ${me}`, `leak-tag-${me}`);
git('notes', 'add', '-m', `SOLUTION note ${me}`);
git('update-ref', `refs/leak/${me}`, 'HEAD');
git('pack-refs', '--all');
fs.writeFileSync(`${repo}/src/a.txt`, `SOLUTION stashed ${me}\n`);
git('stash', 'push', '-q', '-m', `leak stash ${me}`);
git('repack', '-a', '-d', '-q');
git('fetch', '-q', 'origin');
git('reset', '-q', '--soft', 'HEAD~1');
execFileSync('git', ['-C', repo, 'hash-object', '-w', '--stdin'], { input: `SOLUTION unreachable ${me}\n` });
git('config', 'leak.by', me);
fs.writeFileSync(path.join(gitDir, 'hooks', 'post-checkout'), `#!/bin/sh\necho leak ${me}\n`, { mode: 0o755 });
fs.appendFileSync(path.join(gitDir, 'info', 'exclude'), `leak-${me}\n`);

console.log(`${leaks.length === 0 ? 'CLEAN' : `TRACE ${leaks.join('; ')}`}\n${JSON.stringify(seen)}`);
