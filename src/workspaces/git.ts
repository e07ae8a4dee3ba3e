/** A git command that failed: reset and capture read `kind`-free errors as "this slot is unusable". */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')}: ${stderr.trim().slice(0, 500)}`);
    this.name = 'GitError';
  }
}

export interface GitOptions {
  /** `--git-dir` and `--work-tree` are passed explicitly: a deleted `.git` must fail, not find a parent repository. */
  gitDir: string;
  workTree: string;
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** Written to stdin. */
  input?: string;
}

// Fixed identity and no user or system config: a baseline commit must not depend on who runs Proctor, and
// a user's hooks or `core.hooksPath` must not run inside a workspace reset.
const baseEnv = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'proctor',
  GIT_AUTHOR_EMAIL: 'proctor@localhost',
  GIT_COMMITTER_NAME: 'proctor',
  GIT_COMMITTER_EMAIL: 'proctor@localhost',
  GIT_TERMINAL_PROMPT: '0',
};

export const git = async (args: readonly string[], o: GitOptions): Promise<string> => {
  // Loaded on first use: execa costs ~90 ms of CPU that a command starting no process should not pay.
  const { execa } = await import('execa');
  const full = ['--git-dir', o.gitDir, '--work-tree', o.workTree, '-c', 'core.hooksPath=/dev/null', ...args];
  const r = await execa('git', full, {
    cwd: o.workTree,
    env: { ...baseEnv, ...o.env },
    reject: false,
    stripFinalNewline: false,
    ...(o.input === undefined ? { stdin: 'ignore' as const } : { input: o.input }),
    ...(o.signal ? { cancelSignal: o.signal } : {}),
  });
  if (r.exitCode !== 0) throw new GitError(args, String(r.stderr ?? '') || (r.shortMessage ?? 'failed'));
  return String(r.stdout ?? '');
};

/** git outside any repository (`clone`, `init`). */
export const gitPlain = async (args: readonly string[], cwd: string, signal?: AbortSignal): Promise<string> => {
  // Loaded on first use: execa costs ~90 ms of CPU that a command starting no process should not pay.
  const { execa } = await import('execa');
  const r = await execa('git', args, {
    cwd,
    env: baseEnv,
    reject: false,
    ...(signal ? { cancelSignal: signal } : {}),
  });
  if (r.exitCode !== 0) throw new GitError(args, String(r.stderr ?? '') || (r.shortMessage ?? 'failed'));
  return String(r.stdout ?? '');
};
