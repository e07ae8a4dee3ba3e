import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Makes a git repository at `dir` holding `files` in one commit on `main`. */
export const gitRepo = (dir: string, files: Record<string, string>): string => {
  mkdirSync(dir, { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  return dir;
};

/** Whether a process runs (a zombie waiting for init to reap it does not). */
export const processRuns = (pid: number): boolean => {
  try {
    const stat = execFileSync('cat', [`/proc/${pid}/stat`]).toString();
    return !/^\S+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
};
